// switchyard convert: a model folder (Hugging Face safetensors, or an AWQ/GPTQ/FP8
// checkpoint) into one GGUF, with llama.cpp's convert_hf_to_gguf.py options (--outfile,
// --outtype). docs/quality.md has the details.
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/tensor_progress.hpp"
#include "gguf_tools/convert.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace convert_cmd {

struct ConvertArgs {
  std::string input, outfile, outtype = "auto";
  int threads = 0;
};

int fail(const std::string& msg) {
  std::cerr << "switchyard convert: " << msg << "\n";
  return 1;
}

int run_convert(const ConvertArgs& a) {
  namespace fs = std::filesystem;
  const auto outtype = gguf_tools::parse_outtype(a.outtype);
  if (!outtype) return fail("--outtype " + a.outtype + " is not one of " + gguf_tools::outtype_names());
  std::error_code ec;
  if (!fs::exists(a.input, ec)) return fail("the model folder " + a.input + " does not exist");
  const fs::path dir = fs::is_directory(a.input, ec) ? fs::path(a.input) : fs::path(a.input).parent_path();
  const fs::path output = a.outfile.empty() ? dir / ("ggml-model-" + a.outtype + ".gguf") : fs::path(a.outfile);
  if (auto st = util::check_output_path(output, "--outfile"); !st) return fail(st.message());

  const auto t0 = std::chrono::steady_clock::now();
  std::cerr << "convert: " << a.input << " -> " << output.string() << " (--outtype " << a.outtype << ")\n";
  gguf_tools::ConvertOptions o;
  o.outtype = *outtype;
  o.threads = a.threads;
  auto sum = gguf_tools::convert_folder(a.input, output, o, tensor_progress(stop_after_from_env()));
  if (!sum) return fail(sum.status().message());
  for (const auto& n : sum->notes) std::cerr << "convert: note: " << n << "\n";
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "convert: read with format '" << sum->format << "', " << sum->tensors << " tensors, " << mib(sum->bytes_in)
            << " -> " << mib(sum->bytes_out) << " in " << s << " s; wrote " << output.string() << "\n";
  return 0;
}

}  // namespace convert_cmd

void add_convert_command(CLI::App& app, Dispatch& d) {
  using namespace convert_cmd;
  auto a = std::make_shared<ConvertArgs>();
  auto* cmd = app.add_subcommand("convert", "Convert a Hugging Face model folder (safetensors; AWQ, GPTQ, FP8) to GGUF");
  cmd->add_option("model", a->input, "The model folder (config.json, *.safetensors, tokenizer.json)")->required();
  cmd->add_option("--outfile", a->outfile, "The GGUF to write (default: MODEL/ggml-model-OUTTYPE.gguf)");
  cmd->add_option("--outtype", a->outtype,
                  "f32, f16, bf16, q8_0, or auto (default: every type GGUF stores kept; quantized linears as f16)");
  cmd->add_option("-t,--threads", a->threads, "Threads (default: every hardware thread)");
  cmd->callback([&d, a] { d.run = [a] { return run_convert(*a); }; });
}

}  // namespace sy::cli
