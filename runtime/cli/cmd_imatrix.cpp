// switchyard imatrix: an importance matrix of a model on a text, llama-imatrix style (-f
// TEXT, -o FILE, -c chunk size, --chunks, --process-output): the text is evaluated in
// chunks as perplexity evaluates it, and every linear's input is summed per column
// (quantize/imatrix.hpp). The file is llama.cpp's imatrix GGUF; quantize --imatrix reads it.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/list_devices.hpp"
#include "cli/llama_flags.hpp"
#include "cli/number_arg.hpp"
#include "engine/runtime_setup.hpp"
#include "quality/log_probs.hpp"
#include "quality/perplexity.hpp"
#include "quantize/imatrix.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace imatrix_cmd {

struct ImatrixArgs {
  PipelineFlags flags;
  std::string text_file, output = "imatrix.gguf";
  int64_t chunks = -1;
  bool process_output = false;
};

int fail(const std::string& msg) {
  std::cerr << "switchyard imatrix: " << msg << "\n";
  return 1;
}

int run_imatrix(const ImatrixArgs& a) {
  if (a.flags.list_devices) return list_devices(std::cout);
  if (a.text_file.empty()) return fail("give the text to collect on: -f FILE");
  if (auto st = util::check_output_path(a.output, "-o"); !st) return fail(st.message());
  auto n_ctx = token_count_flag(a.flags.ctx, "-c", 512, 4);
  if (!n_ctx) return fail(n_ctx.status().message());
  auto batch = token_count_flag(a.flags.batch, "-b", 2048, 1);
  if (!batch) return fail(batch.status().message());
  int64_t eff_batch = 0;
  PipelineFlags f = chunked_flags(a.flags, *n_ctx, *batch, eff_batch);
  auto p = load_with_flags("imatrix", f);
  if (!p) return 1;
  auto rt = engine::bring_up(*p);
  if (!rt) return fail(rt.status().message());
  engine::Engine& eng = *(*rt)->engine;
  const tok::Tokenizer* tk = (*rt)->tokenizer.get();
  if (!tk) return fail("collecting on a text needs the model's tokenizer, and it has none (" + (*rt)->tokenizer_note + ")");
  auto text = util::read_file(a.text_file, "-f");
  if (!text) return fail(text.status().message());
  const auto tokens = tk->encode(*text, true, false);
  auto plan = quality::plan_chunks(static_cast<int64_t>(tokens.size()), *n_ctx, a.chunks, eff_batch);
  if (!plan) return fail(plan.status().message());
  std::cerr << "imatrix: " << tokens.size() << " tokens, " << plan->chunks << " chunks of " << *n_ctx << "\n";

  quant_tool::ImatrixCollector collector(a.process_output);
  eng.observe_linears([&collector](const engine::LinearInput& in) { return collector.add(in); });
  quality::NllSums nll;
  const auto n_vocab = static_cast<size_t>(eng.n_vocab());
  const auto start = std::chrono::steady_clock::now();
  const auto on_chunk = [&](int64_t chunk, std::span<const int32_t> toks, std::span<const float> logits) -> Status {
    for (int64_t i = 0; i < plan->scored(); ++i) {
      const auto row = logits.subspan(static_cast<size_t>(i) * n_vocab, n_vocab);
      const int32_t target = toks[static_cast<size_t>(plan->first() + i + 1)];
      nll.add(-quality::row_softmax(row).log_prob(row[static_cast<size_t>(target)]));
    }
    std::cerr << "[" << chunk + 1 << "/" << plan->chunks << "] PPL " << nll.perplexity() << ", "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
    return {};
  };
  const int32_t bos = tk->adds_bos() ? tk->bos() : -1;
  if (auto st = quality::evaluate_chunks(eng, tokens, *plan, bos, on_chunk); !st) return fail(st.message());
  eng.observe_linears({});

  quant_tool::Imatrix& m = collector.result();
  m.datasets.push_back(a.text_file);
  m.chunk_size = *n_ctx;
  m.chunk_count = plan->chunks;
  if (m.entries.empty())
    return fail("no linear's input was collected (chunks of " + std::to_string(*n_ctx) +
                " tokens; plain matrices count only in steps of 16 tokens or more)");
  if (auto st = quant_tool::write_imatrix(m, a.output); !st) return fail(st.message());
  int64_t partial = 0;
  for (const auto& [name, e] : m.entries)
    for (double c : e.counts) partial += c == 0;
  std::cerr << "imatrix: " << m.entries.size() << " matrices" << (partial ? ", " + std::to_string(partial) + " experts never chosen" : "")
            << "; final PPL " << nll.perplexity() << "; wrote " << a.output << "\n";
  return 0;
}

}  // namespace imatrix_cmd

void add_imatrix_command(CLI::App& app, Dispatch& d) {
  using namespace imatrix_cmd;
  auto a = std::make_shared<ImatrixArgs>();
  auto* cmd = app.add_subcommand("imatrix", "Importance matrix of a model on a text, llama-imatrix style, for quantize --imatrix");
  add_pipeline_flags(*cmd, a->flags, kSourceFlags | kModelFlags | kContextFlags | kBackendFlags | kPlacementFlags);
  cmd->add_option("-f,--file", a->text_file, "The text to collect on");
  cmd->add_option("-o,--output,--output-file", a->output, "The imatrix file to write (default imatrix.gguf)");
  cmd->add_option("--chunks", a->chunks, "At most this many chunks (default: all)")->transform(integer_in(1, kMaxTokens));
  cmd->add_flag("--process-output", a->process_output, "Collect output.weight's input too");
  cmd->callback([&d, a] { d.run = [a] { return run_imatrix(*a); }; });
}

}  // namespace sy::cli
