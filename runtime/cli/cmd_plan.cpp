// switchyard plan: will this model fit, where does each part go, and how fast can it
// decode? Computed from the model file's header or a topology, before any download.
// Its placement and context flags are spelled as llama.cpp spells them (-c, -ngl,
// --n-cpu-moe, -ot, -ctk), with plan's older names kept as aliases.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/llama_flags.hpp"
#include "cli/json_text.hpp"
#include "cli/number_arg.hpp"
#include "cli/plan_report.hpp"
#include "convert/native.hpp"
#include "engine/runtime_setup.hpp"
#include "model/weights.hpp"
#include "placement/device_names.hpp"
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
  bool grow = false;
  std::string vram, ram, kv, kv_v, gpu_layers, n_cpu_moe, headroom, min_headroom, cpu_bw, gpu_bw;
  std::optional<int64_t> ctx, parallel, ubatch;
  std::vector<std::string> overrides;
  bool json = false, explain = false;
  // --cpu-moe is a flag (llama.cpp's); a value after it is plan's older spelling of
  // --n-cpu-moe, kept only to say so. -p was plan's pipeline option and is now the prompt.
  std::vector<std::string> cpu_moe_value, old_p_value;
  bool cpu_moe = false, old_p = false;
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

// parse_size reads a bare number as bytes, which nobody means by a memory budget or a
// bandwidth: "--vram 24" is almost surely 24 GiB.
// A number with no unit after it ("24", "1.5"); "." or "1.2.3" are not numbers, and the
// size parser reports them.
bool is_bare_number(const std::string& s) {
  return util::parse_finite(s).ok() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

// The refusal of a size without a unit; 0 passes where zero_ok (no GPU, no headroom).
std::optional<std::string> unitless_size(const std::string& flag, const std::string& s, bool zero_ok, bool percent_ok) {
  if (!is_bare_number(s)) return std::nullopt;
  if (const auto v = util::parse_finite(s); zero_ok && v.ok() && v.value == 0) return std::nullopt;
  return flag + " " + s + ": " + s + " bytes? write " + (percent_ok ? s + "% or " : "") + s + "GiB (or " + s + "GB)";
}

// "900GB/s" or "900GB" -> bytes/s in `out`; otherwise the message.
std::optional<std::string> parse_bandwidth(const std::string& flag, std::string s, const std::string& example,
                                           double& out) {
  const std::string typed = s;
  if (s.size() > 2 && s.substr(s.size() - 2) == "/s") s.resize(s.size() - 2);
  if (is_bare_number(s)) {
    if (const auto v = util::parse_finite(s); v.ok() && v.value == 0)
      return flag + " 0: a bandwidth must be more than 0, like " + example;
    return flag + " " + typed + ": write a unit, like " + s + "GB/s";
  }
  const auto b = pipeline::parse_size(s);
  if (!b) return flag + " '" + typed + "' is not like " + example;
  if (*b == 0) return flag + " " + typed + ": a bandwidth must be more than 0, like " + example;
  out = static_cast<double>(*b);
  return std::nullopt;
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

// llama.cpp's -ot takes a comma-separated list and buffer names as it prints them (CPU,
// CUDA0, Vulkan0); plan's devices are lower case.
std::optional<std::string> add_overrides(const std::string& value, std::vector<pipeline::OverrideRule>& out) {
  if (!value.empty() && value.back() == ',')
    return "--override-tensor '" + value + "' ends in a comma; remove it or add another REGEX=DEVICE";
  for (const std::string& o : split_override_tensor(value)) {
    const size_t eq = o.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size())
      return "--override-tensor must be REGEX=DEVICE[,REGEX=DEVICE...] (e.g. 'blk\\.1[0-9]\\.ffn_.*_exps=CPU'), got '" + o + "'";
    if (auto why = pipeline::pattern_too_costly(o.substr(0, eq))) return "--override-tensor: the regular expression " + *why;
    out.push_back({o.substr(0, eq), plan_device(o.substr(eq + 1)), {}});
  }
  return std::nullopt;
}

// The conversion plan for the placement chosen: started devices answer for themselves;
// GPUs given by --vram are judged by the manifest of the pipeline's one GPU backend.
void plan_conversions(PlanReport& rep, const planner::ModelDesc& m, const std::vector<planner::DeviceSpec>& devs,
                      const pipeline::Pipeline& pl, const engine::Runtime* probed) {
  std::vector<std::optional<convert::DeviceTypes>> targets(devs.size());
  if (probed) {
    for (size_t d = 0; d < probed->devices.size(); ++d) {
      const std::string& name = probed->names[d].portable;
      for (size_t k = 0; k < devs.size(); ++k)
        if (devs[k].name == name && !targets[k]) {
          targets[k] = probed->device_types[d];
          targets[k]->name = name;
        }
    }
  }
  std::vector<std::string> gpu_backends;
  for (const auto& b : pl.backends)
    if (b.plugin != "cpu" && std::find(gpu_backends.begin(), gpu_backends.end(), b.plugin) == gpu_backends.end())
      gpu_backends.push_back(b.plugin);
  for (size_t k = 0; k < devs.size(); ++k) {
    if (targets[k]) continue;
    const registry::ComponentRecord* rec = nullptr;
    if (gpu_backends.size() == 1 && devs[k].gpu && probed)
      rec = probed->registry->find(ComponentKind::backend, gpu_backends.front());
    if (rec) {
      targets[k] = convert::declared_types(probed->registry->manifest(*rec), devs[k].name, nullptr);
    } else {
      rep.unplanned.push_back(devs[k].name + ": not planned (" +
                              (devs[k].gpu ? "give a pipeline with one GPU backend, -P FILE, to plan its conversions"
                                           : "the cpu backend did not start") +
                              ")");
    }
  }
  const auto convert_to = convert::convert_to_type(pl.format.convert_to);
  const auto& assignment = rep.fit.placed.assignment.tensor_device;
  for (size_t i = 0; i < m.tensors.size() && i < assignment.size(); ++i) {
    const auto k = static_cast<size_t>(assignment[i]);
    if (k < targets.size() && targets[k])
      rep.conversions.add(targets[k]->name, m.tensors[i], convert::decide(m.tensors[i], *targets[k], convert_to));
  }
}

int run_plan(PlanArgs a) {
  if (a.old_p)
    return fail("-p is the prompt, as in llama.cpp; the pipeline file is -P FILE (did you mean -P?)");
  if (a.cpu_moe && !a.cpu_moe_value.empty() && !a.cpu_moe_value.front().empty()) {
    const std::string v = a.cpu_moe_value.front();
    if (v == "all")
      return fail("--cpu-moe all: --cpu-moe takes no value (alone it keeps every routed expert in RAM, as in llama.cpp); "
                  "write --cpu-moe, or --n-cpu-moe N for the first N layers");
    return fail("--cpu-moe " + v + ": --cpu-moe takes no value (alone it keeps every routed expert in RAM, as in llama.cpp); "
                "for the routed experts of the first N layers write --n-cpu-moe " + v);
  }
  if (a.cpu_moe && !a.n_cpu_moe.empty())
    return fail("give --cpu-moe (every routed expert in RAM) or --n-cpu-moe N (those of the first N layers), not both");
  // A pipeline supplies the model, context and placement; flags override it.
  pipeline::Pipeline pl;
  if (!a.pipeline.empty()) {
    // The model file is checked below, where plan can say that --topology or -m stands in
    // for a model that is not downloaded yet.
    pipeline::ValidateOptions vo;
    vo.model_file = false;
    const auto lr = pipeline::load_pipeline(a.pipeline, a.sets, nullptr, vo);
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
    return fail("--set needs a pipeline (-P FILE)");
  }
  const auto& pc = pl.context;
  if (!a.ctx) a.ctx = pc.length;
  if (!a.parallel) a.parallel = pc.parallel;
  if (!a.ubatch) a.ubatch = pc.ubatch;
  if (a.kv.empty()) a.kv = pc.kv_type;
  if (!a.kv_v.empty())
    if (auto why = kv_type_conflict(a.kv, a.kv_v)) return fail("--cache-type-v " + a.kv_v + ": " + *why);
  if (!a.model.empty() && !a.topology.empty()) return fail("give a model file (-m FILE) or a topology (--topology NAME), not both");
  if (a.model.empty() && a.topology.empty())
    return fail("give a model file (-m FILE), a topology (--topology NAME) or a pipeline (-P FILE)");
  // The model: a file's header, or what synth would write.
  planner::ModelDesc m;
  if (!a.model.empty()) {
    std::vector<std::string> warnings;
    registry::Registry reg(registry::default_search_path(pl.plugin_path, warnings));
    auto d = planner::describe_file(reg, a.model, pl.model.format);  // a pipeline's format, as run reads it
    if (!d) return fail(d.status().message(), 1);
    m = std::move(*d);
  } else {
    auto t = synth::resolve_topology(a.topology);
    if (!t) return fail(t.status().message());
    if (auto st = synth::scale_topology(*t, a.layers, a.experts, a.vocab, a.grow); !st) return fail(st.message());
    auto d = synth::describe(*t, a.type);
    if (!d) return fail(d.status().message());
    m = std::move(*d);
  }

  // The request.
  planner::Request r;
  r.ctx = *a.ctx, r.parallel = *a.parallel, r.ubatch = *a.ubatch;
  if (r.ctx < 1 || r.parallel < 1 || r.ubatch < 1) return fail("--ctx-size, --parallel and --ubatch-size must be at least 1");
  const auto kv = storage_type_from_name(a.kv);
  if (!kv || (*kv != StorageType::F32 && *kv != StorageType::F16 && *kv != StorageType::BF16 && *kv != StorageType::Q8_0 &&
              *kv != StorageType::Q4_0))
    return fail("--cache-type-k must be f32, f16, bf16, q8_0 or q4_0, not '" + a.kv + "'");
  r.kv_type = *kv;
  if (storage_type_info(*kv).block_size > 1 && (m.hp.head_dim_k % 32 || m.hp.head_dim_v % 32))
    return fail("--cache-type-k " + a.kv + " needs a head size divisible by 32 and this model's is " +
                std::to_string(m.hp.head_dim_k) + "; use --cache-type-k f16");

  // The devices.
  std::vector<planner::DeviceSpec> devs;
  std::optional<double> gpu_bw;
  if (!a.gpu_bw.empty()) {
    double bw = 0;
    if (auto why = parse_bandwidth("--gpu-bandwidth", a.gpu_bw, "900GB/s", bw)) return fail(*why);
    gpu_bw = bw;
  }
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
      if (auto why = unitless_size("--vram", item, false, false)) return fail(*why);
      const auto b = pipeline::parse_size(item);
      if (!b || *b == 0) return fail("--vram '" + item + "' is not a size like 24GiB (more than 0, less than 16 EiB)");
      devs.push_back({"gpu" + std::to_string(devs.size()), true, *b, gpu_bw.value_or(900e9), gpu_bw ? "given" : "assumed"});
    }
  }
  // No --vram with a pipeline that lists GPU backends: the GPUs that start here, under the
  // names `run` places by (gpu0, gpu1, ...), with the memory free now.
  std::unique_ptr<engine::Runtime> probed;
  if (pipeline_gpu && a.vram.empty()) {
    probed = std::make_unique<engine::Runtime>();
    std::vector<std::string> warnings;
    probed->registry = std::make_unique<registry::Registry>(registry::default_search_path(pl.plugin_path, warnings));
    if (auto st = engine::start_backends(pl, *probed); !st) return fail(st.message(), 1);
    for (const auto& n : probed->notes) notes.push_back(n);
    for (size_t d = 0; d < probed->devices.size(); ++d)
      if (probed->names[d].gpu)
        devs.push_back({probed->names[d].portable, true, probed->devices[d]->info().free_memory,
                        gpu_bw.value_or(900e9), gpu_bw ? "given" : "assumed"});
  }
  planner::DeviceSpec cpu{"cpu", false, 0, 0, ""};
  if (!a.ram.empty()) {
    if (auto why = unitless_size("--ram", a.ram, false, false)) return fail(*why);
    const auto b = pipeline::parse_size(a.ram);
    if (!b || *b == 0) return fail("--ram '" + a.ram + "' is not a size like 64GiB (more than 0, less than 16 EiB)");
    cpu.budget = *b;
  } else {
    cpu.budget = host_ram();
  }
  if (!a.cpu_bw.empty()) {
    if (auto why = parse_bandwidth("--cpu-bandwidth", a.cpu_bw, "60GB/s", cpu.bandwidth)) return fail(*why);
    cpu.bandwidth_source = "given";
  } else {
    cpu.bandwidth = planner::measure_ram_bandwidth(), cpu.bandwidth_source = "measured";
  }
  devs.push_back(cpu);

  // The placement rules: the pipeline's (or the defaults), then the flags.
  pipeline::PlacementConfig cfg = pl.placement;
  for (auto& o : cfg.overrides) {
    if (probed) {
      auto name = placement::resolve_device(o.device, probed->names);
      if (!name) return fail(name.status().message());
      o.device = *name;
    } else {
      o.device = plan_device(o.device);
    }
  }
  // A pipeline's cpu_moe is a floor that auto-fit may raise when gpu_layers is auto.
  const bool moe_given = a.cpu_moe || !a.n_cpu_moe.empty();
  bool moe_auto = !moe_given && cfg.gpu_layers.mode == pipeline::LayerCount::Mode::automatic;
  if (!a.gpu_layers.empty()) {
    bool ngl_auto = false;
    auto ngl = parse_layers(a.gpu_layers, ngl_auto);
    if (!ngl)
      return fail("--n-gpu-layers must be a number from 0 to " + std::to_string(kMaxLayerFlag) + ", all or auto, not '" +
                  a.gpu_layers + "'");
    cfg.gpu_layers = *ngl;
    moe_auto = !moe_given && ngl_auto;
  }
  if (a.cpu_moe) cfg.cpu_moe = pipeline::LayerCount{pipeline::LayerCount::Mode::all, 0};
  if (!a.n_cpu_moe.empty()) {
    auto moe = parse_layers(a.n_cpu_moe, moe_auto);
    if (!moe)
      return fail("--n-cpu-moe must be a number from 0 to " + std::to_string(kMaxLayerFlag) + ", auto or all, not '" +
                  a.n_cpu_moe + "'");
    cfg.cpu_moe = moe_auto ? pipeline::LayerCount{pipeline::LayerCount::Mode::count, 0} : *moe;
  }
  if (auto why = unitless_size("--headroom", a.headroom, true, true)) return fail(*why);
  if (auto why = unitless_size("--min-headroom", a.min_headroom, true, true)) return fail(*why);
  if (!a.headroom.empty() || !a.min_headroom.empty()) {
    const auto hr = pipeline::parse_amount(a.headroom.empty() ? "10%" : a.headroom);
    const auto mhr = pipeline::parse_amount(a.min_headroom.empty() ? "1GiB" : a.min_headroom);
    if (!hr || !mhr) return fail("--headroom and --min-headroom take a percentage (10%) or a size (1GiB)");
    if (!a.headroom.empty()) cfg.headroom = *hr;
    if (!a.min_headroom.empty()) cfg.min_headroom = *mhr;
  }
  std::vector<pipeline::OverrideRule> given;
  for (const auto& o : a.overrides)
    if (auto why = add_overrides(o, given)) return fail(*why);
  cfg.overrides.insert(cfg.overrides.begin(), given.begin(), given.end());  // flags before the pipeline's

  auto rep = make_plan_report(m, devs, cfg, moe_auto, r, a.kv, notes);
  if (!rep) return fail(rep.status().message());
  // What the CPU of this machine would repack at load, asked of its device as the loader
  // asks (same-size layouts: the memory figures above do not change).
  if (!probed) {
    pipeline::Pipeline cpu_only = pl;
    std::erase_if(cpu_only.backends, [](const pipeline::BackendConfig& b) { return b.plugin != "cpu"; });
    if (cpu_only.backends.empty()) cpu_only.backends.push_back({"cpu", {}, {}, {}});  // -m alone: run's default
    probed = std::make_unique<engine::Runtime>();
    std::vector<std::string> warnings;
    probed->registry = std::make_unique<registry::Registry>(registry::default_search_path(pl.plugin_path, warnings));
    if (auto st = engine::start_backends(cpu_only, *probed); !st) probed.reset();
  }
  if (probed) {
    const Device* host = probed->devices.at(static_cast<size_t>(probed->host_device));
    const auto& assignment = rep->fit.placed.assignment.tensor_device;
    for (size_t i = 0; i < m.tensors.size(); ++i)
      if (devs[static_cast<size_t>(assignment[i])].name == "cpu" && model::repacks_on_host(*host, m.tensors[i]))
        rep->cpu_repacked += m.tensors[i].bytes;
  }
  plan_conversions(*rep, m, devs, pl, probed.get());
  if (a.json) std::cout << json_text(plan_json(*rep, a.explain), 2) << "\n";
  else print_plan(*rep, a.explain);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, Dispatch& d) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan", "Plan memory per device, the placement and the speed ceiling for a model");
  cmd->add_option("-P,--pipeline", a->pipeline, "Pipeline whose model, context and placement to plan (flags override)");
  // Hidden: answers the old `plan -p FILE` with the new spelling.
  auto* old_p = cmd->add_option("-p", a->old_p_value)->expected(0, 1)->group("");
  cmd->add_option("--set", a->sets, "Override a pipeline key, e.g. --set context.length=32768 (repeatable)");
  cmd->add_option("-m,--model", a->model, "Model file (only its header is read)");
  cmd->add_option("--topology", a->topology, "Built-in topology or topology file instead of a model file");
  cmd->add_option("--type", a->type, "Type mix for --topology (q4_k_m, q8_0, f16, ...)")->capture_default_str();
  cmd->add_option("--layers", a->layers, "Scale the topology: layers (more than it has needs --grow)")
      ->transform(integer_in(0, synth::kMaxTopologyCount));
  cmd->add_option("--experts", a->experts, "Scale the topology: routed experts (more than it has needs --grow)")
      ->transform(integer_in(0, synth::kMaxTopologyCount));
  cmd->add_flag("--grow", a->grow, "Allow --layers and --experts past the topology's own counts");
  cmd->add_option("--vocab", a->vocab, "Scale the topology: vocabulary")->transform(integer_in(0, synth::kMaxTopologyVocab));
  cmd->add_option("--vram", a->vram, "GPU memory, one size per GPU (24GiB or 24GiB,16GiB); default or 0: CPU only");
  cmd->add_option("--ram", a->ram, "Host memory budget, e.g. 64GiB (default: this machine's RAM)");
  // The same ranges as the pipeline keys context.length, context.parallel, context.ubatch.
  cmd->add_option("-c,--ctx-size,--ctx", a->ctx, "Context length per sequence (default 4096)")
      ->transform(integer_in(1, kMaxTokens));
  cmd->add_option("--parallel", a->parallel, "Sequences decoded at once (default 1; -np)")->transform(integer_in(1, 4096));
  cmd->add_option("--cache-type-k,--kv", a->kv, "KV cache type: f16 (default), q8_0, q4_0, bf16, f32 (-ctk)");
  cmd->add_option("--cache-type-v", a->kv_v, "Must equal the K type: K and V share one type (-ctv)");
  cmd->add_option("--ubatch-size,--ubatch", a->ubatch, "Tokens per compute pass (default 512; -ub)")
      ->transform(integer_in(1, 1 << 20));
  cmd->add_option("--n-gpu-layers,--gpu-layers", a->gpu_layers, "Layers on the GPUs: N, all or auto (default auto; -ngl)");
  cmd->add_option("--n-cpu-moe", a->n_cpu_moe, "Routed experts of the first N layers in RAM: N or auto (default auto; -ncmoe)");
  auto* cpu_moe = cmd->add_option("--cpu-moe", a->cpu_moe_value, "Every routed expert in RAM (-cmoe)")->expected(0, 1)->type_name("");
  cmd->add_option("--override-tensor,--override", a->overrides,
                  "REGEX=DEVICE[,...] (repeatable; first match wins; devices gpu0.., cpu, CUDA0, Vulkan0, CPU; -ot)");
  cmd->add_option("--headroom", a->headroom, "Memory kept free per device: 10% or 2GiB (default 10%)");
  cmd->add_option("--min-headroom", a->min_headroom, "The least headroom, e.g. 1GiB (default 1GiB)");
  cmd->add_option("--cpu-bandwidth", a->cpu_bw, "Host memory bandwidth, e.g. 60GB/s (default: measured now)");
  cmd->add_option("--gpu-bandwidth", a->gpu_bw, "GPU memory bandwidth, e.g. 900GB/s (default: 900GB/s, assumed)");
  cmd->add_flag("--explain", a->explain, "Say why each group of tensors went where");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([&d, a, old_p, cpu_moe] {
    a->old_p = old_p->count() > 0;
    a->cpu_moe = cpu_moe->count() > 0;
    d.run = [a] { return run_plan(*a); };
  });
}

}  // namespace sy::cli
