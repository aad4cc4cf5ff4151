#include "engine/runtime_setup.hpp"

#include <algorithm>

#include "engine/preflight.hpp"
#include "log/log.hpp"
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

Result<std::unique_ptr<Runtime>> bring_up(const pipeline::Pipeline& p, const std::vector<registry::SearchDir>* search,
                                          bool routing_stats) {
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
  rt->host_device = -1;
  std::vector<std::string> started;  // plugins whose backend came up
  for (const auto& b : p.backends) {
    ParamMap params = b.params;
    if (!b.devices.empty()) params.set("devices", b.devices);
    auto be = rt->registry->create_backend(b.plugin, params);
    if (!be) {
      // A GPU backend without a usable device: run on the rest, unless strict.
      if (p.strict) return Status(be.status().code(), "backend " + b.plugin + ": " + be.status().message());
      rt->notes.push_back("backend " + b.plugin + " skipped: " + be.status().message());
      lg->warn("{}", rt->notes.back());
      continue;
    }
    for (size_t i = 0; i < (*be)->device_count(); ++i) {
      // The cpu backend's device holds weights and cache. Not any device of kind cpu:
      // lavapipe is a Vulkan device on the CPU, with Vulkan's memory and (no) kernels.
      if (rt->host_device < 0 && b.plugin == "cpu") rt->host_device = static_cast<int>(rt->devices.size());
      rt->devices.push_back(&(*be)->device(i));
    }
    rt->backends.push_back(std::move(*be));
    started.push_back(b.plugin);
  }
  // Validation checks override devices against the listed `devices`; with `devices: all`
  // only the started backend knows how many there are.
  for (const auto& r : p.placement.overrides) {
    if (r.device == "cpu") continue;
    std::string have;
    bool found = false;
    const std::string plugin = r.device.substr(0, r.device.find_last_not_of("0123456789") + 1);
    for (const Device* d : rt->devices) {
      const std::string name = d->info().name;
      found = found || name == r.device;
      if (name.rfind(plugin, 0) == 0) have += (have.empty() ? "" : ", ") + name;
    }
    // A backend that was skipped has said why; its devices are not expected.
    if (found || std::find(started.begin(), started.end(), plugin) == started.end()) continue;
    return error::invalid_argument(pipeline::format_diagnostic(
        {r.loc, "device '" + r.device + "' does not exist on this machine; the " + plugin + " backend has " + have +
                    " (see `switchyard run --list-devices`)",
         false}));
  }
  if (rt->host_device < 0)
    return error::unavailable(
        "the pipeline has no cpu backend; weights and the KV cache live in RAM until GPU placement lands, so add "
        "`- { plugin: cpu }` to `backends`");
  if (rt->devices.size() > 1) {
    // Documented as planned (docs/tuning.md): say so rather than let -ngl look applied.
    const bool asks_gpu = p.placement.gpu_layers.mode != pipeline::LayerCount::Mode::count ||
                          p.placement.gpu_layers.n > 0 ||
                          std::any_of(p.placement.overrides.begin(), p.placement.overrides.end(),
                                      [](const pipeline::OverrideRule& r) { return r.device != "cpu"; });
    if (asks_gpu) {
      rt->notes.push_back(
          "placement is planned, not applied yet (issue 16): every weight and the KV cache stay in RAM and the CPU "
          "computes; `switchyard plan` shows the placement the pipeline asks for");
      lg->warn("{}", rt->notes.back());
    }
  }
  Device& host = *rt->devices[static_cast<size_t>(rt->host_device)];
  auto m = model::Model::load(std::move(*opened), p.model.path, host, rt->host_device,
                              model::WeightOptions{p.model.mmap, p.model.mlock});
  if (!m) return m.status();
  rt->model = std::move(*m);
  if (!p.model.tokenizer.empty()) {
    auto t = tok::Tokenizer::from_hf(p.model.tokenizer);
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
  cfg.ubatch = p.context.ubatch;
  cfg.strict = p.strict;
  cfg.routing_stats = routing_stats;
  auto e = Engine::create(*rt->model, rt->devices, rt->host_device, cfg);
  if (!e) return e.status();
  rt->engine = std::move(*e);
  if (rt->model->weights().converted() > 0 && p.strict)
    return error::unsupported(std::to_string(rt->model->weights().converted()) +
                              " weight tensors needed conversion at load and `strict: true` forbids it");
  return rt;
}

}  // namespace sy::engine
