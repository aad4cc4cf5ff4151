// switchyard synth: writes a GGUF with deterministic random weights. Built in for now: the
// small demo models (`demo` = a scaled-down Qwen3.6-35B-A3B, `demo-llama`), which the demo
// and the tests use instead of downloaded files.
#include <iostream>

#include "cli/commands.hpp"
#include "synth/demo_model.hpp"

namespace sy::cli {
namespace {

struct SynthArgs {
  std::string topology = "demo";
  std::string out;
  std::string type = "q8_0";
  uint64_t seed = 42;
  bool no_tokenizer = false;
};

int run_synth(const SynthArgs& a) {
  synth::DemoModelOptions o;
  if (a.topology == "demo") {
    o.arch = "qwen35moe";
  } else if (a.topology == "demo-llama") {
    o.arch = "llama";
  } else {
    std::cerr << "switchyard synth: unknown topology '" << a.topology << "'; built in: demo, demo-llama\n";
    return 2;
  }
  const auto t = storage_type_from_name(a.type);
  if (!t) {
    std::cerr << "switchyard synth: --type " << a.type << " is not a storage type (try f32, f16, q8_0, q4_k)\n";
    return 2;
  }
  o.type = *t;
  o.seed = a.seed;
  o.tokenizer = !a.no_tokenizer;
  if (auto st = synth::write_demo_model(a.out, o); !st) {
    std::cerr << "switchyard synth: " << st.message() << "\n";
    return 1;
  }
  std::cout << "wrote " << a.out << "\n";
  return 0;
}

}  // namespace

void add_synth_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<SynthArgs>();
  auto* cmd = app.add_subcommand("synth", "Write a model with deterministic random weights");
  cmd->add_option("--topology", a->topology, "demo (scaled-down Qwen3.6-35B-A3B) or demo-llama")->capture_default_str();
  cmd->add_option("-o,--out", a->out, "Output GGUF file")->required();
  cmd->add_option("--type", a->type, "Storage type of the matrices (f32, f16, bf16, q8_0, q4_k, ...)")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed")->capture_default_str();
  cmd->add_flag("--no-tokenizer", a->no_tokenizer, "Leave out the vocabulary and chat template");
  cmd->callback([&d, a] { d.run = [a] { return run_synth(*a); }; });
}

}  // namespace sy::cli
