// switchyard plan: will this model fit, where does each part go, and how fast can it
// decode? Computed from the model file's header or a topology, before any download.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/json_text.hpp"
#include "cli/number_arg.hpp"
#include "cli/plan_report.hpp"
#include "pipeline/validate.hpp"
#include "planner/describe.hpp"
#include "synth/synth.hpp"
#include "util/parse_number.hpp"

namespace sy::cli {
namespace {

// Empty strings and unset optionals: not given (the pipeline's value, else the default).
struct PlanArgs {
  std::string pipeline, model, topology, type = "q4_k_m";
  std::vector<std::string> sets;
  int64_t layers = 0, experts = 0, vocab = 0;
  std::string vram, ram, kv, gpu_layers, cpu_moe, headroom, min_headroom, cpu_bw, gpu_bw;
  std::optional<int64_t> ctx, parallel, ubatch;
  std::vector<std::string> overrides;
  bool json = false, explain = false;
};

// plan's GPUs are gpuN whatever the backend.
std::string plan_device(std::string dev) {
  for (const std::string kind : {"cuda", "vulkan"})
    if (dev.rfind(kind, 0) == 0) return "gpu" + dev.substr(kind.size());
  return dev;
}

int fail(const std::string& msg, int code = 2) {
  std::cerr << "switchyard plan: " << msg << "\n";
  return code;
}

uint64_t host_ram() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (in >> key >> kib)
    if (key == "MemTotal:") return kib * 1024;
  return 0;
}

// "900GB/s", "900" (GB/s) -> bytes/s
std::optional<double> parse_bandwidth(std::string s) {
  if (s.size() > 2 && s.substr(s.size() - 2) == "/s") s.resize(s.size() - 2);
  if (!s.empty() && std::isdigit(static_cast<unsigned char>(s.back()))) s += "GB";
  const auto b = pipeline::parse_size(s);
  return b ? std::optional<double>(static_cast<double>(*b)) : std::nullopt;
}

// The range of placement.gpu_layers and placement.cpu_moe in a pipeline.
constexpr int64_t kMaxLayerFlag = 100000;

std::optional<pipeline::LayerCount> parse_layers(const std::string& s, bool& automatic) {
  using Mode = pipeline::LayerCount::Mode;
  automatic = s == "auto";
  if (automatic) return pipeline::LayerCount{Mode::automatic, 0};
  if (s == "all") return pipeline::LayerCount{Mode::all, 0};
  const auto n = util::parse_integer<int64_t>(s, 0, kMaxLayerFlag);
  if (n.ok()) return pipeline::LayerCount{Mode::count, n.value};
  return std::nullopt;
}

int run_plan(PlanArgs a) {
  // A pipeline supplies the model, context and placement; flags override it.
  pipeline::Pipeline pl;
  if (!a.pipeline.empty()) {
    const auto lr = pipeline::load_pipeline(a.pipeline, a.sets);
    for (const auto& d : lr.diagnostics) std::cerr << pipeline::format_diagnostic(d) << "\n";
    if (!lr.ok()) return 1;
    pl = lr.pipeline;
    if (a.model.empty() && a.topology.empty()) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(pl.model.path, ec))
        return fail("the pipeline's model " + pl.model.path.string() +
                    " is not here; pass --topology NAME to plan with that model's shape, or -m FILE");
      a.model = pl.model.path.string();
    }
  } else if (!a.sets.empty()) {
    return fail("--set needs a pipeline (-p FILE)");
  }
  const auto& pc = pl.context;
  if (!a.ctx) a.ctx = pc.length;
  if (!a.parallel) a.parallel = pc.parallel;
  if (!a.ubatch) a.ubatch = pc.ubatch;
  if (a.kv.empty()) a.kv = pc.kv_type;
  if (!a.model.empty() && !a.topology.empty()) return fail("give a model file (-m FILE) or a topology (--topology NAME), not both");
  if (a.model.empty() && a.topology.empty())
    return fail("give a model file (-m FILE), a topology (--topology NAME) or a pipeline (-p FILE)");
  // The model: a file's header, or what synth would write.
  planner::ModelDesc m;
  if (!a.model.empty()) {
    std::vector<std::string> warnings;
    registry::Registry reg(registry::default_search_path({}, warnings));
    auto d = planner::describe_file(reg, a.model);
    if (!d) return fail(d.status().message(), 1);
    m = std::move(*d);
  } else {
    auto t = synth::resolve_topology(a.topology);
    if (!t) return fail(t.status().message());
    if (auto st = synth::scale_topology(*t, a.layers, a.experts, a.vocab); !st) return fail(st.message());
    auto d = synth::describe(*t, a.type);
    if (!d) return fail(d.status().message());
    m = std::move(*d);
  }

  // The request.
  planner::Request r;
  r.ctx = *a.ctx, r.parallel = *a.parallel, r.ubatch = *a.ubatch;
  if (r.ctx < 1 || r.parallel < 1 || r.ubatch < 1) return fail("--ctx, --parallel and --ubatch must be at least 1");
  const auto kv = storage_type_from_name(a.kv);
  if (!kv || (*kv != StorageType::F32 && *kv != StorageType::F16 && *kv != StorageType::BF16 && *kv != StorageType::Q8_0 &&
              *kv != StorageType::Q4_0))
    return fail("--kv must be f32, f16, bf16, q8_0 or q4_0, not '" + a.kv + "'");
  r.kv_type = *kv;
  if (storage_type_info(*kv).block_size > 1 && (m.hp.head_dim_k % 32 || m.hp.head_dim_v % 32))
    return fail("--kv " + a.kv + " needs a head size divisible by 32 and this model's is " + std::to_string(m.hp.head_dim_k) +
                "; use --kv f16");

  // The devices.
  std::vector<planner::DeviceSpec> devs;
  std::optional<double> gpu_bw;
  if (!a.gpu_bw.empty() && !(gpu_bw = parse_bandwidth(a.gpu_bw))) return fail("--gpu-bandwidth '" + a.gpu_bw + "' is not like 900GB/s");
  std::vector<std::string> notes;
  const bool pipeline_gpu = std::any_of(pl.backends.begin(), pl.backends.end(),
                                        [](const pipeline::BackendConfig& b) { return b.plugin != "cpu"; });
  if (!a.pipeline.empty() && !pipeline_gpu && !a.vram.empty()) {
    notes.push_back("the pipeline uses no GPU backend, so --vram is not used");
    a.vram.clear();
  }
  if (!a.vram.empty() && a.vram != "0") {
    std::stringstream ss(a.vram);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const auto b = pipeline::parse_size(item);
      if (!b || *b == 0) return fail("--vram '" + item + "' is not a size like 24GiB (more than 0, less than 16 EiB)");
      devs.push_back({"gpu" + std::to_string(devs.size()), true, *b, gpu_bw.value_or(900e9), gpu_bw ? "given" : "assumed"});
    }
  }
  planner::DeviceSpec cpu{"cpu", false, 0, 0, ""};
  if (!a.ram.empty()) {
    const auto b = pipeline::parse_size(a.ram);
    if (!b || *b == 0) return fail("--ram '" + a.ram + "' is not a size like 64GiB (more than 0, less than 16 EiB)");
    cpu.budget = *b;
  } else {
    cpu.budget = host_ram();
  }
  if (!a.cpu_bw.empty()) {
    const auto bw = parse_bandwidth(a.cpu_bw);
    if (!bw) return fail("--cpu-bandwidth '" + a.cpu_bw + "' is not like 60GB/s");
    cpu.bandwidth = *bw, cpu.bandwidth_source = "given";
  } else {
    cpu.bandwidth = planner::measure_ram_bandwidth(), cpu.bandwidth_source = "measured";
  }
  devs.push_back(cpu);

  // The placement rules: the pipeline's (or the defaults), then the flags.
  pipeline::PlacementConfig cfg = pl.placement;
  for (auto& o : cfg.overrides) o.device = plan_device(o.device);
  // A pipeline's cpu_moe is a floor that auto-fit may raise when gpu_layers is auto.
  bool moe_auto = a.cpu_moe.empty() && cfg.gpu_layers.mode == pipeline::LayerCount::Mode::automatic;
  if (!a.gpu_layers.empty()) {
    bool ngl_auto = false;
    auto ngl = parse_layers(a.gpu_layers, ngl_auto);
    if (!ngl) return fail("--gpu-layers must be a number from 0 to " + std::to_string(kMaxLayerFlag) + ", all or auto, not '" + a.gpu_layers + "'");
    cfg.gpu_layers = *ngl;
    moe_auto = a.cpu_moe.empty() && ngl_auto;
  }
  if (!a.cpu_moe.empty()) {
    auto moe = parse_layers(a.cpu_moe, moe_auto);
    if (!moe) return fail("--cpu-moe must be a number from 0 to " + std::to_string(kMaxLayerFlag) + ", all or auto, not '" + a.cpu_moe + "'");
    cfg.cpu_moe = moe_auto ? pipeline::LayerCount{pipeline::LayerCount::Mode::count, 0} : *moe;
  }
  if (!a.headroom.empty() || !a.min_headroom.empty()) {
    const auto hr = pipeline::parse_amount(a.headroom.empty() ? "10%" : a.headroom);
    const auto mhr = pipeline::parse_amount(a.min_headroom.empty() ? "1GiB" : a.min_headroom);
    if (!hr || !mhr) return fail("--headroom and --min-headroom take a percentage (10%) or a size (1GiB)");
    if (!a.headroom.empty()) cfg.headroom = *hr;
    if (!a.min_headroom.empty()) cfg.min_headroom = *mhr;
  }
  std::vector<pipeline::OverrideRule> given;
  for (const auto& o : a.overrides) {
    const size_t eq = o.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size())
      return fail("--override must be REGEX=DEVICE (e.g. 'blk\\.1[0-9]\\.ffn_.*_exps=cpu'), got '" + o + "'");
    if (auto why = pipeline::pattern_too_costly(o.substr(0, eq))) return fail("--override: the regular expression " + *why);
    given.push_back({o.substr(0, eq), plan_device(o.substr(eq + 1)), {}});
  }
  cfg.overrides.insert(cfg.overrides.begin(), given.begin(), given.end());  // flags before the pipeline's

  auto rep = make_plan_report(m, devs, cfg, moe_auto, r, a.kv, notes);
  if (!rep) return fail(rep.status().message());
  if (a.json) std::cout << json_text(plan_json(*rep, a.explain), 2) << "\n";
  else print_plan(*rep, a.explain);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan", "Plan memory per device, the placement and the speed ceiling for a model");
  cmd->add_option("-p,--pipeline", a->pipeline, "Pipeline whose model, context and placement to plan (flags override)");
  cmd->add_option("--set", a->sets, "Override a pipeline key, e.g. --set context.length=32768 (repeatable)");
  cmd->add_option("-m,--model", a->model, "Model file (only its header is read)");
  cmd->add_option("--topology", a->topology, "Built-in topology or topology file instead of a model file");
  cmd->add_option("--type", a->type, "Type mix for --topology (q4_k_m, q8_0, f16, ...)")->capture_default_str();
  cmd->add_option("--layers", a->layers, "Scale the topology: layers")->transform(integer_in(0, synth::kMaxTopologyCount));
  cmd->add_option("--experts", a->experts, "Scale the topology: routed experts")
      ->transform(integer_in(0, synth::kMaxTopologyCount));
  cmd->add_option("--vocab", a->vocab, "Scale the topology: vocabulary")->transform(integer_in(0, synth::kMaxTopologyVocab));
  cmd->add_option("--vram", a->vram, "GPU memory, one size per GPU (24GiB or 24GiB,16GiB); none: CPU only");
  cmd->add_option("--ram", a->ram, "Host memory budget (default: this machine's RAM)");
  // The same ranges as the pipeline keys context.length, context.parallel, context.ubatch.
  cmd->add_option("--ctx", a->ctx, "Context length per sequence (default 4096)")->transform(integer_in(1, kMaxTokens));
  cmd->add_option("--parallel", a->parallel, "Sequences decoded at once (default 1)")->transform(integer_in(1, 4096));
  cmd->add_option("--kv", a->kv, "KV cache type: f16 (default), q8_0, q4_0, bf16, f32");
  cmd->add_option("--ubatch", a->ubatch, "Tokens per compute pass (default 512)")->transform(integer_in(1, 1 << 20));
  cmd->add_option("--gpu-layers", a->gpu_layers, "N, all or auto (default auto)");
  cmd->add_option("--cpu-moe", a->cpu_moe, "Routed experts of the first N layers in RAM: N, all or auto (default auto)");
  cmd->add_option("--override", a->overrides, "REGEX=DEVICE (repeatable; first match wins; devices gpu0.. and cpu)");
  cmd->add_option("--headroom", a->headroom, "Memory kept free per device (default 10%)");
  cmd->add_option("--min-headroom", a->min_headroom, "The least headroom (default 1GiB)");
  cmd->add_option("--cpu-bandwidth", a->cpu_bw, "Host memory bandwidth (default: measured now)");
  cmd->add_option("--gpu-bandwidth", a->gpu_bw, "GPU memory bandwidth (default: 900GB/s, assumed)");
  cmd->add_flag("--explain", a->explain, "Say why each group of tensors went where");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([&d, a] { d.run = [a] { return run_plan(*a); }; });
}

}  // namespace sy::cli
