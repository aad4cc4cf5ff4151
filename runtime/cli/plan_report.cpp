#include "cli/plan_report.hpp"

#include <algorithm>
#include <cstdio>

#include "util/bytes.hpp"

namespace sy::cli {
namespace {

using util::human_bytes;

std::string gib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ull << 30));
  return buf;
}

// The longest context per sequence (a multiple of the KV block, at most the trained
// context) for which ok(ctx) holds.
template <typename Ok>
int64_t longest_context(const planner::ModelDesc& m, Ok ok) {
  int64_t lo = 0, hi = std::max<int64_t>(m.hp.n_ctx_train, planner::kKvBlock) / planner::kKvBlock;
  if (!ok(planner::kKvBlock)) return 0;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (ok(mid * planner::kKvBlock)) lo = mid;
    else hi = mid - 1;
  }
  return lo * planner::kKvBlock;
}

}  // namespace

Result<PlanReport> make_plan_report(const planner::ModelDesc& m, const std::vector<planner::DeviceSpec>& devs,
                                    const pipeline::PlacementConfig& cfg, bool moe_auto, const planner::Request& r,
                                    const std::string& kv_name, const std::vector<std::string>& notes) {
  auto f = placement::fit(m, devs, cfg, moe_auto, r);
  if (!f) return f.status();
  PlanReport rep{m, devs, cfg, r, kv_name, std::move(*f)};
  const auto& fit = rep.fit;
  const auto& placed = fit.placed;
  // With this placement; and with whatever placement auto-fit would choose for that context.
  rep.max_context = longest_context(m, [&](int64_t ctx) {
    planner::Request q = r;
    q.ctx = ctx;
    return placement::fits(planner::account(m, placed.assignment, devs, q), devs, cfg);
  });
  const bool automatic = fit.automatic_gpu_layers || fit.automatic_cpu_moe;
  rep.max_context_refitted = !automatic ? rep.max_context : longest_context(m, [&](int64_t ctx) {
    planner::Request q = r;
    q.ctx = ctx;
    auto g = placement::fit(m, devs, cfg, moe_auto, q);
    return g && g->fits;
  });
  rep.kv_per_token = planner::kv_bytes_per_token(m.hp, r.kv_type);
  rep.kv_total = rep.kv_per_token * planner::kv_cells(r);
  rep.state_per_sequence = planner::recurrent_bytes_per_sequence(m.hp);
  for (const auto& t : m.tensors) rep.weights += t.bytes;
  rep.tps_empty = planner::decode_ceiling(m, placed.assignment, devs, r, 0, 1);
  rep.tps_full = planner::decode_ceiling(m, placed.assignment, devs, r, r.ctx, 1);
  rep.tps_parallel = planner::decode_ceiling(m, placed.assignment, devs, r, r.ctx, r.parallel);

  auto& warnings = rep.warnings;
  warnings = notes;
  if (r.ctx > m.hp.n_ctx_train)
    warnings.push_back("--ctx " + std::to_string(r.ctx) + " is beyond the context the model was trained for (" +
                       std::to_string(m.hp.n_ctx_train) + ")");
  // The KV cache is worth a word when it rivals the weights or costs context.
  if (rep.kv_total * 4 >= rep.weights || !fit.fits || rep.max_context < r.ctx)
    warnings.push_back(std::to_string(r.ctx) + " x " + std::to_string(r.parallel) + " sequences need " +
                       gib(rep.kv_total) + " of KV cache (" + kv_name + ")" +
                       (rep.max_context < r.ctx ? "; at most " + std::to_string(rep.max_context) + " fits" : ""));
  if (!fit.fits)
    for (size_t d = 0; d < devs.size(); ++d)
      if (fit.usage[d].total() > placement::usable_bytes(cfg, devs[d].budget))
        warnings.push_back("does not fit: " + devs[d].name + " needs " + gib(fit.usage[d].total()) + " but has " +
                           gib(placement::usable_bytes(cfg, devs[d].budget)) + " usable (" + gib(devs[d].budget) +
                           " less headroom)");

  // Why each group of tensors went where: the same device and rule.
  auto& groups = rep.groups;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const auto& dev = devs[static_cast<size_t>(placed.assignment.tensor_device[i])].name;
    const auto& why = placed.reason[i];
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const PlanReport::Group& g) { return g.device == dev && g.reason == why; });
    if (it == groups.end()) it = groups.insert(groups.end(), PlanReport::Group{dev, why, 0, 0});
    ++it->tensors, it->bytes += m.tensors[i].bytes;
  }
  return rep;
}

nlohmann::json plan_json(const PlanReport& rep, bool explain) {
  const auto& hp = rep.model.hp;
  nlohmann::json j;
  j["model"] = rep.model.name;
  j["arch"] = hp.arch;
  j["layers"] = hp.n_layer;
  j["full_attention_layers"] = hp.n_full_attention_layers();
  j["ctx"] = rep.request.ctx, j["parallel"] = rep.request.parallel, j["kv_type"] = rep.kv_name, j["ubatch"] = rep.request.ubatch;
  j["kv_bytes_per_token"] = rep.kv_per_token;
  j["kv_bytes"] = rep.kv_total;
  j["recurrent_state_bytes_per_sequence"] = rep.state_per_sequence;
  j["gpu_layers"] = rep.fit.placed.choice.gpu_layers;
  j["cpu_moe"] = rep.fit.placed.choice.cpu_moe;
  j["gpu_layers_auto"] = rep.fit.automatic_gpu_layers;
  j["cpu_moe_auto"] = rep.fit.automatic_cpu_moe;
  j["max_context"] = rep.max_context;
  j["cpu_repacked_bytes"] = rep.cpu_repacked;
  j["max_context_refitted"] = rep.max_context_refitted;
  j["fits"] = rep.fit.fits;
  j["weights_bytes"]["total"] = rep.weights;
  for (size_t d = 0; d < rep.devices.size(); ++d) {
    const auto& u = rep.fit.usage[d];
    j["weights_bytes"]["per_device"][rep.devices[d].name] = u.weights;
    j["devices"].push_back({{"name", rep.devices[d].name},
                            {"kind", rep.devices[d].gpu ? "gpu" : "cpu"},
                            {"budget", rep.devices[d].budget},
                            {"usable", placement::usable_bytes(rep.config, rep.devices[d].budget)},
                            {"weights", u.weights},
                            {"expert_weights", u.expert_weights},
                            {"kv", u.kv},
                            {"recurrent", u.recurrent},
                            {"compute", u.compute},
                            {"overhead", u.overhead},
                            {"total", u.total()},
                            {"bandwidth", rep.devices[d].bandwidth},
                            {"bandwidth_source", rep.devices[d].bandwidth_source}});
  }
  j["decode_tokens_per_s"] = {{"empty_context", rep.tps_empty}, {"full_context", rep.tps_full}, {"parallel_aggregate", rep.tps_parallel}};
  j["conversions"] = convert::plan_json(rep.conversions);
  if (!rep.unplanned.empty()) j["conversions_unplanned"] = rep.unplanned;
  j["warnings"] = rep.warnings;
  if (explain)
    for (const auto& g : rep.groups)
      j["explain"].push_back({{"device", g.device}, {"reason", g.reason}, {"tensors", g.tensors}, {"bytes", g.bytes}});
  return j;
}

void print_plan(const PlanReport& rep, bool explain) {
  const auto& hp = rep.model.hp;
  std::printf("model      %s: %s, %lld layers", rep.model.name.c_str(), hp.arch.c_str(), static_cast<long long>(hp.n_layer));
  if (hp.full_attn_interval > 0)
    std::printf(" (%lld full attention, %lld linear)", static_cast<long long>(hp.n_full_attention_layers()),
                static_cast<long long>(hp.n_linear_layers()));
  if (hp.n_expert) std::printf(", %lld experts (%lld used)", static_cast<long long>(hp.n_expert), static_cast<long long>(hp.n_expert_used));
  std::printf(", %s of weights\n", human_bytes(rep.weights).c_str());
  std::printf("request    context %lld x %lld sequences, KV %s, ubatch %lld\n", static_cast<long long>(rep.request.ctx),
              static_cast<long long>(rep.request.parallel), rep.kv_name.c_str(), static_cast<long long>(rep.request.ubatch));
  std::printf("placement  gpu_layers %lld%s, cpu_moe %lld%s\n\n", static_cast<long long>(rep.fit.placed.choice.gpu_layers),
              rep.fit.automatic_gpu_layers ? " (auto)" : "", static_cast<long long>(rep.fit.placed.choice.cpu_moe),
              rep.fit.automatic_cpu_moe ? " (auto)" : "");
  std::printf("%-26s", "component");
  for (const auto& d : rep.devices) std::printf("%16s", d.name.c_str());
  std::printf("\n");
  auto row = [&](const char* label, auto get) {
    std::printf("%-26s", label);
    for (size_t d = 0; d < rep.devices.size(); ++d) std::printf("%16s", human_bytes(get(d)).c_str());
    std::printf("\n");
  };
  row("routed experts", [&](size_t d) { return rep.fit.usage[d].expert_weights; });
  row("other weights", [&](size_t d) { return rep.fit.usage[d].weights - rep.fit.usage[d].expert_weights; });
  row("KV cache", [&](size_t d) { return rep.fit.usage[d].kv; });
  row("recurrent state", [&](size_t d) { return rep.fit.usage[d].recurrent; });
  row("compute buffers", [&](size_t d) { return rep.fit.usage[d].compute; });
  row("runtime overhead", [&](size_t d) { return rep.fit.usage[d].overhead; });
  row("total", [&](size_t d) { return rep.fit.usage[d].total(); });
  row("usable (budget-headroom)", [&](size_t d) { return placement::usable_bytes(rep.config, rep.devices[d].budget); });
  std::printf("\nKV cache          %llu bytes per token and sequence; %s for %lld x %lld\n",
              static_cast<unsigned long long>(rep.kv_per_token), human_bytes(rep.kv_total).c_str(), static_cast<long long>(rep.request.ctx),
              static_cast<long long>(rep.request.parallel));
  if (rep.state_per_sequence) std::printf("recurrent state   %s per sequence\n", human_bytes(rep.state_per_sequence).c_str());
  if (rep.cpu_repacked)
    std::printf("repacked at load  cpu: %s of Q4_K, Q6_K, Q4_0, Q8_0 and I4_G* weights into 16-row interleaved layouts (same size; when the CPU's weights fit in 90%% of "
                "available memory; backends[cpu].repack: false keeps the file's layout)\n",
                human_bytes(rep.cpu_repacked).c_str());
  // Per device and type: a kernel of its own, the type's repack, requantization, the CPU's
  // generic kernel, or nothing (what `run` then does is the line's last part).
  const auto& steps = rep.conversions.steps();
  for (size_t i = 0; i < steps.size(); ++i)
    std::printf("%s%s%s\n", i == 0 ? "conversions       " : "                  ", convert::describe(steps[i]).c_str(),
                steps[i].action == convert::Action::impossible && steps[i].device != "cpu"
                    ? " (run keeps such tensors in RAM for the CPU; strict: true refuses them)"
                    : "");
  for (const auto& u : rep.unplanned) std::printf("conversions       %s\n", u.c_str());
  std::printf("longest context   %lld per sequence (x%lld) with this placement", static_cast<long long>(rep.max_context),
              static_cast<long long>(rep.request.parallel));
  if (rep.max_context_refitted != rep.max_context) std::printf("; %lld if auto-fit places it anew", static_cast<long long>(rep.max_context_refitted));
  std::printf("\n");
  std::printf("decode ceiling    %.1f tokens/s at position 0, %.1f at %lld", rep.tps_empty, rep.tps_full, static_cast<long long>(rep.request.ctx));
  if (rep.request.parallel > 1)
    std::printf("; %.1f together over %lld sequences at %lld", rep.tps_parallel, static_cast<long long>(rep.request.parallel),
                static_cast<long long>(rep.request.ctx));
  std::printf("\n                  (bandwidth:");
  for (const auto& d : rep.devices) std::printf(" %s %.1f GB/s %s;", d.name.c_str(), d.bandwidth / 1e9, d.bandwidth_source.c_str());
  std::printf(")\n");
  for (const auto& w : rep.warnings) std::printf("warning: %s\n", w.c_str());
  if (explain) {
    std::printf("\nwhy each group of tensors went where:\n");
    for (const auto& g : rep.groups)
      std::printf("  %-6s %4zu tensors %12s  %s\n", g.device.c_str(), g.tensors, human_bytes(g.bytes).c_str(), g.reason.c_str());
  }
}

}  // namespace sy::cli
