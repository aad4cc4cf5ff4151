// switchyard synth: writes a GGUF with deterministic random weights for a named topology
// (the real shapes of qwen3.6-35b-a3b, qwen3-30b-a3b, ...; `demo` is the tiny built-in
// default) or a topology file, so memory plans and speed can be checked before a download.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/number_arg.hpp"
#include "synth/synth.hpp"
#include "util/read_file.hpp"

namespace sy::cli {
namespace {

struct SynthArgs {
  std::string topology = "demo";
  std::string out;
  std::string type = "q8_0";
  std::string tokenizer;
  std::string seed = "42";  // checked by seed_arg(); -1 asks for a random one
  int64_t layers = 0, experts = 0, vocab = 0;
  int threads = 0;
  bool no_tokenizer = false, list = false, grow = false;
};

// A random seed is printed so that the same file can be written again with --seed N.
uint64_t resolve_seed(const std::string& text) {
  if (text != "-1") return std::stoull(text);
  const uint64_t seed = random_seed();
  std::cerr << "seed: " << seed << " (random)\n";
  return seed;
}

int run_synth(const SynthArgs& a) {
  if (a.list) {
    for (const auto& n : synth::builtin_topology_names()) std::cout << n << "\n";
    return 0;
  }
  if (a.no_tokenizer && !a.tokenizer.empty()) {
    std::cerr << "switchyard synth: give --tokenizer FILE or --no-tokenizer, not both\n";
    return 2;
  }
  if (a.out.empty()) {
    std::cerr << "switchyard synth: -o FILE is required (where to write the model)\n";
    return 2;
  }
  if (auto st = util::check_output_path(a.out, "-o"); !st) {
    std::cerr << "switchyard synth: " << st.message() << "\n";
    return 2;
  }
  if (!a.tokenizer.empty())
    if (auto st = util::check_input_file(a.tokenizer, "--tokenizer"); !st) {
      std::cerr << "switchyard synth: " << st.message() << "\n";
      return 2;
    }
  auto t = synth::resolve_topology(a.topology);
  if (!t) {
    std::cerr << "switchyard synth: " << t.status().message() << "\n";
    return 2;
  }
  if (auto st = synth::scale_topology(*t, a.layers, a.experts, a.vocab, a.grow); !st) {
    std::cerr << "switchyard synth: " << st.message() << "\n";
    return 2;
  }
  synth::SynthOptions o;
  o.type = a.type;
  o.seed = resolve_seed(a.seed);
  o.tokenizer = !a.no_tokenizer;
  o.tokenizer_json = a.tokenizer;
  o.threads = a.threads;
  const auto t0 = std::chrono::steady_clock::now();
  if (auto st = synth::write_synth_model(a.out, *t, o); !st) {
    std::cerr << "switchyard synth: " << st.message() << "\n";
    return st.code() == StatusCode::invalid_argument ? 2 : 1;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(a.out, ec);
  std::printf("wrote %s: %s (%s), %lld layers, %.2f GiB in %.1f s\n", a.out.c_str(), t->name.c_str(), a.type.c_str(),
              static_cast<long long>(t->n_layer), static_cast<double>(bytes) / (1ull << 30), s);
  return 0;
}

}  // namespace

void add_synth_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<SynthArgs>();
  auto* cmd = app.add_subcommand("synth", "Write a model with deterministic random weights for a topology");
  cmd->add_option("--topology", a->topology,
                  "Built-in topology (see --list) or a tensorfs-topology-v2 shapes file")->capture_default_str();
  cmd->add_option("-o,--out", a->out, "Output GGUF file");
  cmd->add_option("--type", a->type, "q4_k_m, q5_k_m, or one storage type for every matrix (q8_0, f16, q4_k, ...)")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the weights (-1: a random one, printed)")->capture_default_str()->transform(seed_arg(UINT64_MAX));
  cmd->add_option("--layers", a->layers, "Keep only the first N layers (0: all; more needs --grow)")
      ->transform(integer_in(0, synth::kMaxTopologyCount));
  cmd->add_option("--experts", a->experts, "Routed experts per layer (0: the topology's; more needs --grow)")
      ->transform(integer_in(0, synth::kMaxTopologyCount));
  cmd->add_option("--vocab", a->vocab, "Vocabulary size (0: the topology's)")->transform(integer_in(0, synth::kMaxTopologyVocab));
  cmd->add_option("--tokenizer", a->tokenizer, "Embed this tokenizer.json instead of a synthetic vocabulary");
  cmd->add_option("--threads", a->threads, "Threads writing tensor data (0: all)")->transform(integer_in(0, 1024));
  cmd->add_flag("--no-tokenizer", a->no_tokenizer, "Leave out the vocabulary and chat template");
  cmd->add_flag("--grow", a->grow, "Allow --layers and --experts past the topology's own counts (no real model has that shape)");
  cmd->add_flag("--list", a->list, "List the built-in topologies");
  cmd->callback([&d, a] { d.run = [a] { return run_synth(*a); }; });
}

}  // namespace sy::cli
