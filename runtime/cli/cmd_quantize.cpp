// switchyard quantize: llama-quantize's command line (INPUT [OUTPUT] TYPE [THREADS], --pure,
// --allow-requantize, --leave-output-tensor, --output-tensor-type, --token-embedding-type,
// --tensor-type) on our quantizers. Progress is a bar on a terminal and a line per tensor
// otherwise. docs/quality.md has the details.
#include <chrono>
#include <optional>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/tensor_progress.hpp"
#include "quantize/quantize.hpp"
#include "util/bytes.hpp"
#include "util/parse_number.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
// A named namespace: unity builds put this file beside others with their own helpers.
namespace quantize_cmd {

struct QuantizeArgs {
  std::vector<std::string> positional;  // INPUT [OUTPUT] TYPE [THREADS]
  bool pure = false, allow_requantize = false, leave_output = false;
  std::string output_type, token_embd_type, imatrix;
  std::vector<std::string> tensor_types;
  int threads = 0;
};

int fail(const std::string& msg) {
  std::cerr << "switchyard quantize: " << msg << "\n";
  return 1;
}

Result<StorageType> plain_type(const std::string& flag, const std::string& name) {
  auto r = quant_tool::parse_recipe(name);
  if (!r || r->mix != quant_tool::Mix::none)
    return error::invalid_argument(flag + " " + name + ": give a storage type (" + quant_tool::recipe_names() +
                                   ", without the _S/_M/_L recipes)");
  return r->base;
}

// Beside a GGUF input, as llama-quantize does; inside a model folder, as llama.cpp's converter does.
std::filesystem::path default_output(const std::filesystem::path& input, const std::string& type) {
  std::error_code ec;
  const auto dir = std::filesystem::is_directory(input, ec) ? input : input.parent_path();
  return dir / ("ggml-model-" + type + ".gguf");
}

int run_quantize(const QuantizeArgs& a) {
  const auto& p = a.positional;
  if (p.size() < 2 || p.size() > 4)
    return fail("usage: switchyard quantize [options] INPUT [OUTPUT.gguf] TYPE [THREADS] (INPUT: a .gguf file or a model folder)");
  // TYPE is the last positional that parses as a recipe, counting a trailing thread count.
  size_t type_at = p.size() - 1;
  int threads = a.threads;
  if (p.size() >= 3 && util::parse_integer<int>(p.back(), 1, 4096).ok() && quant_tool::parse_recipe(p[p.size() - 2])) {
    threads = util::parse_integer<int>(p.back(), 1, 4096).value;
    type_at = p.size() - 2;
  }
  auto recipe = quant_tool::parse_recipe(p[type_at]);
  if (!recipe) return fail(recipe.status().message());
  if (type_at > 2) return fail("too many arguments before TYPE: give INPUT and at most one OUTPUT");
  const std::filesystem::path input = p[0];
  std::filesystem::path output = type_at == 2 ? std::filesystem::path(p[1])
                                              : default_output(input, recipe->name);
  std::error_code ec;
  if (!std::filesystem::is_directory(input, ec))
    if (auto st = util::check_input_file(input, "INPUT"); !st) return fail(st.message());
  if (auto st = util::check_output_path(output, "OUTPUT"); !st) return fail(st.message());

  quant_tool::QuantizeOptions o;
  o.recipe = *recipe;
  o.allow_requantize = a.allow_requantize;
  o.threads = threads;
  o.types.pure = a.pure;
  o.types.leave_output = a.leave_output;
  if (!a.output_type.empty()) {
    auto t = plain_type("--output-tensor-type", a.output_type);
    if (!t) return fail(t.status().message());
    o.types.output_type = *t;
  }
  if (!a.token_embd_type.empty()) {
    auto t = plain_type("--token-embedding-type", a.token_embd_type);
    if (!t) return fail(t.status().message());
    o.types.token_embd_type = *t;
  }
  for (const auto& spec : a.tensor_types) {
    const auto eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0)
      return fail("--tensor-type " + spec + ": give PATTERN=TYPE, e.g. attn_v=q8_0");
    auto t = plain_type("--tensor-type", spec.substr(eq + 1));
    if (!t) return fail(t.status().message());
    o.types.overrides.emplace_back(spec.substr(0, eq), *t);
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::cerr << "quantize: " << input.string() << " -> " << output.string() << " as " << recipe->name
            << (a.pure ? " (--pure)" : "") << "\n";
  std::optional<quant_tool::Imatrix> imatrix;
  if (!a.imatrix.empty()) {
    if (auto st = util::check_input_file(a.imatrix, "--imatrix"); !st) return fail(st.message());
    auto m = quant_tool::read_imatrix(a.imatrix);
    if (!m) return fail(m.status().message());
    imatrix = std::move(*m);
    o.imatrix = &*imatrix;
    std::cerr << "quantize: importance matrix " << a.imatrix << ": " << imatrix->entries.size() << " entries, "
              << imatrix->chunk_count << " chunks of " << imatrix->chunk_size << "\n";
  }
  auto sum = quant_tool::quantize_model(input, output, o, tensor_progress(stop_after_from_env()));
  if (!sum) return fail(sum.status().message());
  for (const auto& n : sum->notes) std::cerr << "quantize: note: " << n << "\n";
  if (o.imatrix) std::cerr << "quantize: " << sum->weighted << " tensors quantized with importance weights\n";
  for (const auto& f : sum->fallbacks) std::cerr << "quantize: note: " << f << "\n";
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "quantize: " << sum->quantized << " of " << sum->tensors << " tensors converted, " << mib(sum->bytes_in)
            << " -> " << mib(sum->bytes_out) << " in " << s << " s; wrote " << output.string() << "\n";
  return 0;
}

}  // namespace quantize_cmd

void add_quantize_command(CLI::App& app, Dispatch& d) {
  using namespace quantize_cmd;
  auto a = std::make_shared<QuantizeArgs>();
  auto* cmd = app.add_subcommand("quantize", "Quantize a GGUF model or a Hugging Face folder, llama-quantize style: INPUT [OUTPUT] TYPE [THREADS]");
  cmd->add_option("args", a->positional, "INPUT (.gguf or a model folder) [OUTPUT.gguf] TYPE [THREADS]; TYPE: " + quant_tool::recipe_names())
      ->required();
  cmd->add_flag("--pure", a->pure, "Every quantizable tensor in TYPE: no per-tensor rules of the _S/_M/_L recipes");
  cmd->add_flag("--allow-requantize", a->allow_requantize, "Accept tensors that are already quantized as the source");
  cmd->add_flag("--leave-output-tensor", a->leave_output, "Keep output.weight in its source type");
  cmd->add_option("--output-tensor-type", a->output_type, "The type of output.weight");
  cmd->add_option("--token-embedding-type", a->token_embd_type, "The type of token_embd.weight");
  // One value per occurrence: the positional arguments after it are not patterns.
  cmd->add_option("--tensor-type", a->tensor_types, "PATTERN=TYPE: tensors whose name matches the regex get TYPE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("-t,--threads", a->threads, "Threads (default: every hardware thread)");
  cmd->add_option("--imatrix", a->imatrix, "An importance matrix (switchyard imatrix or llama-imatrix, GGUF format)");
  cmd->callback([&d, a] { d.run = [a] { return run_quantize(*a); }; });
}

}  // namespace sy::cli
