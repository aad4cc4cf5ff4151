// switchyard gguf split|merge: llama.cpp's gguf-split (--split-max-tensors,
// --split-max-size, --no-tensor-first-split, --dry-run; --merge). docs/quality.md.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/tensor_progress.hpp"
#include "gguf_tools/split.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace gguf_cmd {

struct GgufArgs {
  std::string input, output;
  int64_t max_tensors = 128;
  std::string max_size;
  bool no_tensor_first_split = false, dry_run = false;
};

int fail(const std::string& what, const std::string& msg) {
  std::cerr << "switchyard gguf " << what << ": " << msg << "\n";
  return 1;
}

int run_split(const GgufArgs& a) {
  gguf_tools::SplitOptions o;
  o.max_tensors = a.max_tensors;
  o.no_tensor_first_split = a.no_tensor_first_split;
  if (!a.max_size.empty()) {
    auto b = gguf_tools::parse_size(a.max_size);
    if (!b) return fail("split", b.status().message());
    o.max_bytes = *b;
  }
  if (auto st = util::check_input_file(a.input, "INPUT"); !st) return fail("split", st.message());
  auto shards = gguf_tools::split_model(a.input, a.output, o, a.dry_run, tensor_progress(stop_after_from_env()));
  if (!shards) return fail("split", shards.status().message());
  std::cerr << "gguf split: " << (a.dry_run ? "would write " : "wrote ") << shards->size() << " shards\n";
  for (const auto& p : *shards) std::cout << p.string() << "\n";
  return 0;
}

int run_merge(const GgufArgs& a) {
  if (auto st = util::check_input_file(a.input, "INPUT"); !st) return fail("merge", st.message());
  if (auto st = util::check_output_path(a.output, "OUTPUT"); !st) return fail("merge", st.message());
  if (auto st = gguf_tools::merge_model(a.input, a.output, tensor_progress(stop_after_from_env())); !st)
    return fail("merge", st.message());
  std::cerr << "gguf merge: wrote " << a.output << "\n";
  return 0;
}

}  // namespace gguf_cmd

void add_gguf_command(CLI::App& app, Dispatch& d) {
  using namespace gguf_cmd;
  auto* gguf = app.add_subcommand("gguf", "GGUF file tools: split a model into shards, merge shards into one file");
  gguf->require_subcommand(1);
  auto s = std::make_shared<GgufArgs>();
  auto* split = gguf->add_subcommand("split", "Split a GGUF into PREFIX-00001-of-0000N.gguf shards (llama.cpp's gguf-split)");
  split->add_option("input", s->input, "The GGUF to split")->required();
  split->add_option("prefix", s->output, "The shards' path prefix (PREFIX-00001-of-0000N.gguf)")->required();
  split->add_option("--split-max-tensors", s->max_tensors, "Tensors per shard (default 128)");
  split->add_option("--split-max-size", s->max_size, "Bytes of tensors per shard instead: 512M, 2G, ...");
  split->add_flag("--no-tensor-first-split", s->no_tensor_first_split, "The first shard holds the metadata only");
  split->add_flag("--dry-run", s->dry_run, "Print the shards' names; write nothing");
  split->callback([&d, s] { d.run = [s] { return run_split(*s); }; });
  auto m = std::make_shared<GgufArgs>();
  auto* merge = gguf->add_subcommand("merge", "Merge a split GGUF (any shard named) into one file");
  merge->add_option("input", m->input, "A shard of the split model (PREFIX-00001-of-0000N.gguf)")->required();
  merge->add_option("output", m->output, "The GGUF to write")->required();
  merge->callback([&d, m] { d.run = [m] { return run_merge(*m); }; });
}

}  // namespace sy::cli
