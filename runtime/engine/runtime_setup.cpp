#include "engine/runtime_setup.hpp"

#include <algorithm>

#include "convert/native.hpp"
#include "engine/preflight.hpp"
#include "log/log.hpp"
#include "placement/placement.hpp"
#include "planner/describe.hpp"

namespace sy::engine {

Result<StorageType> kv_storage_type(const std::string& name) {
  if (name == "f32") return StorageType::F32;
  if (name == "f16") return StorageType::F16;
  if (name == "bf16") return StorageType::BF16;
  if (name == "q8_0") return StorageType::Q8_0;
  if (name == "q4_0") return StorageType::Q4_0;
  return error::unsupported("context.kv_type " + name +
                            " has no attention kernel in this build; use f32, f16, bf16, q8_0 or q4_0");
}

namespace {

struct Where {
  model::WeightPlacement weights;
  model::Model::Layers layers;
};

// The placement `plan` computes, applied: the same rules and auto-fit, over the devices
// that started. Without a GPU everything stays on the host (the preflight has checked RAM).
Result<Where> place_weights(const pipeline::Pipeline& p, const planner::ModelDesc& desc, Runtime& rt) {
  Where w;
  w.weights.devices = rt.devices;
  w.weights.host = rt.host_device;
  w.weights.types = rt.device_types;
  w.layers.output_device = rt.host_device;
  const bool gpus = std::any_of(rt.names.begin(), rt.names.end(), [](const auto& n) { return n.gpu; });
  if (!gpus) return w;
  pipeline::PlacementConfig cfg = p.placement;
  for (auto& r : cfg.overrides) {
    auto name = placement::resolve_device(r.device, rt.names);
    if (!name) return error::invalid_argument(pipeline::format_diagnostic({r.loc, name.status().message(), false}));
    r.device = *name;
  }
  planner::Request req;
  req.ctx = p.context.length;
  req.parallel = p.context.parallel;
  req.kv_tokens = p.context.kv_tokens;
  req.ubatch = p.context.ubatch;
  auto kv = kv_storage_type(p.context.kv_type);
  if (!kv) return kv.status();
  req.kv_type = *kv;
  const auto specs = placement::device_specs(rt.devices, rt.names);
  // As in `plan`: with gpu_layers automatic, cpu_moe is a floor auto-fit may raise.
  const bool moe_auto = cfg.gpu_layers.mode == pipeline::LayerCount::Mode::automatic;
  auto fit = placement::fit(desc, specs, cfg, moe_auto, req);
  if (!fit) return fit.status();
  if (!fit->fits) {
    std::string figures;
    for (size_t d = 0; d < specs.size(); ++d) {
      const uint64_t need = fit->usage[d].total(), usable = placement::usable_bytes(cfg, specs[d].budget);
      figures += "\n  " + specs[d].name + " (" + rt.names[d].own + "): needs " + std::to_string(need >> 20) +
                 " MiB, " + std::to_string(usable >> 20) + " MiB usable" + (need > usable ? "  <- does not fit" : "");
    }
    // The smallest cpu_moe that fits with every layer on the GPUs, if any does.
    std::string hint = "lower context.length or placement.gpu_layers";
    for (int64_t moe = 0; moe <= desc.hp.n_layer; ++moe) {
      auto pl = placement::place(desc, specs, cfg.overrides, {desc.hp.n_layer + 1, moe});
      if (pl && placement::fits(planner::account(desc, pl->assignment, specs, req), specs, cfg)) {
        hint = "cpu_moe " + std::to_string(moe) + " would fit (placement: { cpu_moe: " + std::to_string(moe) +
               " }, or --n-cpu-moe " + std::to_string(moe) + ")";
        break;
      }
    }
    return error::resource_exhausted("the placement does not fit this machine (gpu_layers " +
                                     std::to_string(fit->placed.choice.gpu_layers) + ", cpu_moe " +
                                     std::to_string(fit->placed.choice.cpu_moe) + "):" + figures + "\n" + hint +
                                     "; `switchyard plan -P PIPELINE` shows the whole plan");
  }
  const auto& a = fit->placed.assignment;
  w.weights.tensor_device = a.tensor_device;
  w.layers.layer_device = a.layer_device;
  w.layers.output_device = a.output_device;
  auto lg = log::get("engine");
  lg->info("placement: gpu_layers {}, cpu_moe {}", fit->placed.choice.gpu_layers, fit->placed.choice.cpu_moe);
  return w;
}

}  // namespace

Status start_backends(const pipeline::Pipeline& p, Runtime& rt) {
  auto lg = log::get("engine");
  rt.host_device = -1;
  for (const auto& b : p.backends) {
    ParamMap params = b.params;
    if (!b.devices.empty()) params.set("devices", b.devices);
    auto be = rt.registry->create_backend(b.plugin, params);
    if (!be) {
      // A GPU backend without a usable device: run on the rest, unless strict.
      if (p.strict) return Status(be.status().code(), "backend " + b.plugin + ": " + be.status().message());
      rt.notes.push_back("backend " + b.plugin + " skipped: " + be.status().message());
      lg->warn("{}", rt.notes.back());
      continue;
    }
    const auto* rec = rt.registry->find(ComponentKind::backend, b.plugin);
    for (size_t i = 0; i < (*be)->device_count(); ++i) {
      // The cpu backend's device holds host memory. Not any device of kind cpu: lavapipe
      // is a Vulkan device on the CPU, with Vulkan's memory and kernels.
      if (rt.host_device < 0 && b.plugin == "cpu") rt.host_device = static_cast<int>(rt.devices.size());
      Device* dev = &(*be)->device(i);
      rt.devices.push_back(dev);
      rt.device_types.push_back(rec ? convert::declared_types(rt.registry->manifest(*rec), dev->info().name, dev)
                                    : convert::DeviceTypes{dev->info().name, false, {}, false, dev});
    }
    rt.backends.push_back(std::move(*be));
  }
  if (rt.host_device < 0)
    return error::unavailable(
        "the pipeline has no cpu backend; the token embeddings, and any layer placement leaves in RAM, run there, so "
        "add `- { plugin: cpu }` to `backends`");
  rt.names = placement::name_devices(rt.devices, rt.host_device);
  return Status::ok();
}

Result<std::unique_ptr<Runtime>> bring_up(const pipeline::Pipeline& p, const std::vector<registry::SearchDir>* search,
                                          bool routing_stats, int64_t state_checkpoints) {
  auto rt = std::make_unique<Runtime>();
  auto lg = log::get("engine");
  std::vector<std::string> warnings;
  rt->registry = std::make_unique<registry::Registry>(search ? *search
                                                             : registry::default_search_path(p.plugin_path, warnings));
  for (const auto& w : warnings) lg->warn("{}", w);
  // The model header's checks come before any weight is read or any cache allocated: a
  // context too large for the machine must be refused, not allocated until memory runs out.
  auto opened = model::open_source(*rt->registry, p.model.path, p.model.format);
  if (!opened) return opened.status();
  auto desc = planner::describe_source(*opened->source, p.model.path);
  if (!desc) return desc.status();
  std::string refused;
  for (const auto& d : preflight(p, *desc, *rt->registry)) {
    if (d.warning) lg->warn("{}", pipeline::format_diagnostic({d.loc, d.message, false}));  // the logger says "warning"
    else refused += (refused.empty() ? "" : "\n") + pipeline::format_diagnostic(d);
  }
  if (!refused.empty()) return error::invalid_argument(refused);
  if (auto st = start_backends(p, *rt); !st) return st;
  auto where = place_weights(p, *desc, *rt);
  if (!where) return where.status();
  auto m = model::Model::load(std::move(*opened), p.model.path, where->weights, where->layers,
                              model::WeightOptions{p.model.mmap, p.model.mlock, p.strict,
                                                   convert::convert_to_type(p.format.convert_to),
                                                   p.format.fp8_activations == "static"});
  if (!m) return m.status();
  rt->model = std::move(*m);
  // A model folder's own tokenizer.json stands in for model.tokenizer.
  std::filesystem::path tokenizer = p.model.tokenizer;
  if (std::error_code ec; tokenizer.empty() && std::filesystem::is_directory(p.model.path, ec) &&
                          std::filesystem::exists(p.model.path / "tokenizer.json", ec))
    tokenizer = p.model.path / "tokenizer.json";
  if (!tokenizer.empty()) {
    auto t = tok::Tokenizer::from_hf(tokenizer);
    if (!t) return t.status();
    rt->tokenizer = std::move(*t);
  } else if (auto t = tok::Tokenizer::from_gguf(rt->model->metadata(), p.model.path.string()); t) {
    rt->tokenizer = std::move(*t);
  } else {
    rt->tokenizer_note = t.status().message();
  }
  auto kv_type = kv_storage_type(p.context.kv_type);
  if (!kv_type) return kv_type.status();
  EngineConfig cfg;
  cfg.kv.type = *kv_type;
  cfg.kv.n_ctx = p.context.length;
  cfg.kv.n_seq_max = p.context.parallel;
  if (rt->model->hparams().n_linear_layers() > 0)
    cfg.kv.n_state_checkpoints = state_checkpoints;
  if (p.context.kv_tokens > 0)
    cfg.kv.n_blocks = (std::max(p.context.kv_tokens, p.context.length) + cfg.kv.block_size - 1) / cfg.kv.block_size;
  cfg.ubatch = p.context.ubatch;
  cfg.strict = p.strict;
  cfg.routing_stats = routing_stats;
  auto e = Engine::create(*rt->model, rt->devices, cfg);
  if (!e) return e.status();
  rt->engine = std::move(*e);
  return rt;
}

}  // namespace sy::engine
