#include "placement/placement.hpp"

#include <algorithm>
#include <regex>

namespace sy::placement {
namespace {

using planner::DeviceSpec;
using planner::ModelDesc;

// For each tensor, the first override rule that matches its name (-1: none), resolved to a
// device index. Compiled once per fit, not per placement tried.
Result<std::vector<int>> override_devices(const ModelDesc& m, const std::vector<DeviceSpec>& devices,
                                          const std::vector<pipeline::OverrideRule>& rules, std::vector<int>& rule_of) {
  std::vector<std::regex> res;
  std::vector<int> dev;
  for (const auto& r : rules) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceSpec& d) { return d.name == r.device; });
    if (it == devices.end()) {
      std::string names;
      for (const auto& d : devices) names += (names.empty() ? "" : ", ") + d.name;
      return error::invalid_argument("override '" + r.pattern + "=" + r.device + "' names device '" + r.device +
                                     "', which is not here; the devices are: " + names);
    }
    try {
      res.emplace_back(r.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return error::invalid_argument("override '" + r.pattern + "': invalid regular expression: " + e.what());
    }
    dev.push_back(static_cast<int>(it - devices.begin()));
  }
  std::vector<int> out(m.tensors.size(), -1);
  rule_of.assign(m.tensors.size(), -1);
  for (size_t i = 0; i < m.tensors.size(); ++i)
    for (size_t k = 0; k < res.size(); ++k)
      if (std::regex_search(m.tensors[i].name, res[k])) {
        out[i] = dev[k];
        rule_of[i] = static_cast<int>(k);
        break;
      }
  return out;
}

Placed place_with(const ModelDesc& m, const std::vector<DeviceSpec>& devices,
                  const std::vector<pipeline::OverrideRule>& rules, const std::vector<int>& over,
                  const std::vector<int>& rule_of, Choice c) {
  const int64_t L = m.hp.n_layer;
  int cpu = 0;
  std::vector<int> gpus;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].gpu) gpus.push_back(static_cast<int>(d));
    else cpu = static_cast<int>(d);
  }
  if (gpus.empty()) c.gpu_layers = 0;
  c.gpu_layers = std::clamp<int64_t>(c.gpu_layers, 0, L + 1);
  c.cpu_moe = std::clamp<int64_t>(c.cpu_moe, 0, L);
  Placed p;
  p.choice = c;
  auto& a = p.assignment;
  // The last n layers go to the GPUs, each taking a contiguous share by budget.
  const int64_t n_gpu = std::min(c.gpu_layers, L), first_gpu = L - n_gpu;
  double total = 0;
  for (int g : gpus) total += static_cast<double>(devices[static_cast<size_t>(g)].budget);
  a.layer_device.assign(static_cast<size_t>(L), cpu);
  for (int64_t il = first_gpu; il < L; ++il) {
    const double at = static_cast<double>(il - first_gpu) + 0.5;
    double cum = 0;
    int chosen = gpus.empty() ? cpu : gpus.back();
    for (int g : gpus) {
      cum += static_cast<double>(n_gpu) * static_cast<double>(devices[static_cast<size_t>(g)].budget) / total;
      if (at < cum) {
        chosen = g;
        break;
      }
    }
    a.layer_device[static_cast<size_t>(il)] = chosen;
  }
  const bool output_on_gpu = c.gpu_layers > L && !gpus.empty();
  a.output_device = output_on_gpu ? gpus.back() : cpu;
  const std::string ngl = "gpu_layers " + std::to_string(c.gpu_layers);
  a.tensor_device.resize(m.tensors.size());
  p.reason.resize(m.tensors.size());
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const std::string& name = m.tensors[i].name;
    // Prediction blocks after the decoded stack (nextn_predict_layers) follow the output.
    int64_t il = planner::layer_of(name);
    if (il >= static_cast<int64_t>(a.layer_device.size())) il = -1;
    int d;
    std::string why;
    if (over[i] >= 0) {
      d = over[i];
      const auto& r = rules[static_cast<size_t>(rule_of[i])];
      why = "override '" + r.pattern + "=" + r.device + "' (first matching rule wins)";
    } else if (name == "token_embd.weight") {
      d = cpu, why = "token embeddings stay in RAM: a row lookup per token needs no GPU";
    } else if (il >= 0 && il < c.cpu_moe && planner::is_routed_expert(name)) {
      d = cpu, why = "cpu_moe " + std::to_string(c.cpu_moe) + ": routed experts of layers 0-" +
                     std::to_string(c.cpu_moe - 1) + " stay in RAM";
    } else if (il >= 0) {
      d = a.layer_device[static_cast<size_t>(il)];
      why = d == cpu ? ngl + ": layers below " + std::to_string(first_gpu) + " stay in RAM"
                     : ngl + ": layers " + std::to_string(first_gpu) + "-" + std::to_string(L - 1) + " on the GPU";
    } else {
      d = a.output_device;
      why = output_on_gpu ? ngl + ": the output head counts as layer " + std::to_string(L) + ", on the GPU"
                          : ngl + ": the output head (layer " + std::to_string(L) + ") stays in RAM";
    }
    a.tensor_device[i] = d;
    p.reason[i] = std::move(why);
  }
  return p;
}

}  // namespace

Result<Placed> place(const ModelDesc& m, const std::vector<DeviceSpec>& devices,
                     const std::vector<pipeline::OverrideRule>& overrides, Choice c) {
  std::vector<int> rule_of;
  auto over = override_devices(m, devices, overrides, rule_of);
  if (!over) return over.status();
  return place_with(m, devices, overrides, *over, rule_of, c);
}

uint64_t headroom_bytes(const pipeline::PlacementConfig& config, uint64_t budget) {
  auto resolve = [budget](const pipeline::MemoryAmount& m) {
    return m.bytes ? m.bytes : static_cast<uint64_t>(m.fraction * static_cast<double>(budget));
  };
  return std::max(resolve(config.headroom), resolve(config.min_headroom));
}

uint64_t usable_bytes(const pipeline::PlacementConfig& config, uint64_t budget) {
  const uint64_t keep = headroom_bytes(config, budget);
  return budget > keep ? budget - keep : 0;
}

bool fits(const std::vector<planner::DeviceUsage>& usage, const std::vector<DeviceSpec>& devices,
          const pipeline::PlacementConfig& config) {
  for (size_t d = 0; d < devices.size(); ++d)
    if (usage[d].total() > usable_bytes(config, devices[d].budget)) return false;
  return true;
}

Result<Fit> fit(const ModelDesc& m, const std::vector<DeviceSpec>& devices, const pipeline::PlacementConfig& config,
                bool cpu_moe_auto, const planner::Request& r) {
  using Mode = pipeline::LayerCount::Mode;
  std::vector<int> rule_of;
  auto over = override_devices(m, devices, config.overrides, rule_of);
  if (!over) return over.status();
  const int64_t L = m.hp.n_layer;
  const bool has_gpu = std::any_of(devices.begin(), devices.end(), [](const DeviceSpec& d) { return d.gpu; });
  Fit f;
  f.automatic_gpu_layers = config.gpu_layers.mode == Mode::automatic && has_gpu;
  f.automatic_cpu_moe = cpu_moe_auto && has_gpu && m.hp.n_expert > 0;
  auto try_choice = [&](Choice c) {
    f.placed = place_with(m, devices, config.overrides, *over, rule_of, c);
    f.usage = planner::account(m, f.placed.assignment, devices, r);
    f.fits = fits(f.usage, devices, config);
    return f.fits;
  };
  Choice c;
  c.gpu_layers = !has_gpu ? 0 : config.gpu_layers.mode == Mode::count ? config.gpu_layers.n : L + 1;
  c.cpu_moe = config.cpu_moe.mode == Mode::all ? L : config.cpu_moe.n;
  // Routed experts move to RAM first, layer by layer from the first...
  const int64_t moe_limit = f.automatic_cpu_moe ? L : c.cpu_moe;
  for (; c.cpu_moe <= moe_limit; ++c.cpu_moe)
    if (try_choice(c)) return f;
  c.cpu_moe = moe_limit;
  // ...then the output head, then whole layers from the first (gpu_layers counts from the last).
  if (f.automatic_gpu_layers)
    for (c.gpu_layers = L; c.gpu_layers >= 0; --c.gpu_layers)
      if (try_choice(c)) return f;
  return f;  // the last (smallest) placement tried, fits = false
}

}  // namespace sy::placement
