#include "planner/planner.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "util/read_bandwidth.hpp"

namespace sy::planner {

namespace {

uint64_t kv_layer_bytes(const model::HParams& hp, StorageType t) {
  return storage_row_bytes(t, static_cast<uint64_t>(hp.n_head_kv * hp.head_dim_k)).value_or(0) +
         storage_row_bytes(t, static_cast<uint64_t>(hp.n_head_kv * hp.head_dim_v)).value_or(0);
}

uint64_t state_layer_bytes(const model::HParams& hp) {
  return static_cast<uint64_t>(hp.conv_state_floats() + hp.delta_state_floats()) * sizeof(float);
}

}  // namespace

uint64_t kv_cells(const Request& r) {
  if (r.kv_tokens > 0) return static_cast<uint64_t>((std::max(r.kv_tokens, r.ctx) + kKvBlock - 1) / kKvBlock * kKvBlock);
  return static_cast<uint64_t>((r.ctx + kKvBlock - 1) / kKvBlock * kKvBlock * r.parallel);
}

uint64_t kv_bytes_per_token(const model::HParams& hp, StorageType kv_type) {
  return static_cast<uint64_t>(hp.n_full_attention_layers()) * kv_layer_bytes(hp, kv_type);
}

uint64_t recurrent_bytes_per_sequence(const model::HParams& hp) {
  return static_cast<uint64_t>(hp.n_linear_layers()) * state_layer_bytes(hp);
}

uint64_t compute_bytes(const model::HParams& hp, const Request& r, bool runs_layers, bool output) {
  const auto u = static_cast<uint64_t>(r.ubatch);
  uint64_t bytes = u * static_cast<uint64_t>(hp.n_embd) * 4;  // the embedded ubatch
  if (runs_layers) {
    // Live at once in the arena: the residual stream, the normed input and the branch
    // output (3 x n_embd), plus the widest branch's intermediates.
    const bool gated_q = hp.arch == "qwen35moe";
    const int64_t attn = hp.n_head * hp.head_dim_k * (gated_q ? 2 : 1) + hp.n_head_kv * (hp.head_dim_k + hp.head_dim_v) +
                         hp.n_head * hp.head_dim_v;
    const int64_t ch = 2 * hp.ssm_groups * hp.ssm_state + hp.ssm_v_heads * hp.ssm_state;
    const int64_t linear = hp.full_attn_interval > 0 ? 2 * ch + 2 * hp.ssm_v_heads * hp.ssm_state : 0;
    const int64_t ffn = hp.n_expert ? hp.n_expert_used * (3 * hp.n_ff_exp + hp.n_embd) + 3 * hp.n_ff_shexp + 2 * hp.n_expert
                                    : 3 * hp.n_ff;
    bytes = u * 4 * static_cast<uint64_t>(3 * hp.n_embd + std::max({attn, linear, ffn}));
  }
  // Logits: one row per sequence (prefill asks only for the last position of each prompt).
  if (output) bytes += static_cast<uint64_t>(std::max<int64_t>(r.parallel, 1) * hp.n_vocab) * 4;
  return bytes;
}

std::vector<DeviceUsage> account(const ModelDesc& m, const Assignment& a, const std::vector<DeviceSpec>& devices,
                                 const Request& r) {
  std::vector<DeviceUsage> u(devices.size());
  std::vector<bool> runs(devices.size(), false);
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const auto d = static_cast<size_t>(a.tensor_device[i]);
    const auto& t = m.tensors[i];
    u[d].weights += t.bytes;
    if (is_routed_expert(t.name)) u[d].expert_weights += t.bytes;
    if (layer_of(t.name) >= 0) runs[d] = true;
  }
  const uint64_t cells = kv_cells(r);
  for (int64_t il = 0; il < m.hp.n_layer; ++il) {
    auto& d = u[static_cast<size_t>(a.layer_device[static_cast<size_t>(il)])];
    if (m.hp.is_full_attention(il)) d.kv += kv_layer_bytes(m.hp, r.kv_type) * cells;
    else d.recurrent += state_layer_bytes(m.hp) * static_cast<uint64_t>(r.parallel);
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    const bool output = static_cast<int>(d) == a.output_device;
    const bool host = !devices[d].gpu;
    if (runs[d] || output || host) u[d].compute = compute_bytes(m.hp, r, runs[d], output);
    u[d].overhead = devices[d].gpu ? (runs[d] || output ? kGpuOverheadBytes : 0) : kCpuOverheadBytes;
  }
  return u;
}

double decode_ceiling(const ModelDesc& m, const Assignment& a, const std::vector<DeviceSpec>& devices, const Request& r,
                      int64_t pos, int64_t parallel) {
  std::vector<double> bytes(devices.size(), 0.0);
  // Experts touched by P tokens routed independently: n (1 - (1 - k/n)^P).
  const double k = static_cast<double>(m.hp.n_expert_used), n = static_cast<double>(std::max<int64_t>(m.hp.n_expert, 1));
  const double expert_frac = m.hp.n_expert ? 1.0 - std::pow(1.0 - k / n, static_cast<double>(parallel)) : 1.0;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const auto& t = m.tensors[i];
    if (t.name == "token_embd.weight") continue;  // a row lookup per token
    bytes[static_cast<size_t>(a.tensor_device[i])] += static_cast<double>(t.bytes) * (is_routed_expert(t.name) ? expert_frac : 1.0);
  }
  for (int64_t il = 0; il < m.hp.n_layer; ++il) {
    auto& b = bytes[static_cast<size_t>(a.layer_device[static_cast<size_t>(il)])];
    if (m.hp.is_full_attention(il)) b += static_cast<double>(kv_layer_bytes(m.hp, r.kv_type)) * static_cast<double>(pos * parallel);
    else b += 2.0 * static_cast<double>(state_layer_bytes(m.hp)) * static_cast<double>(parallel);  // read and write
  }
  double seconds = 0;
  for (size_t d = 0; d < devices.size(); ++d)
    if (bytes[d] > 0 && devices[d].bandwidth > 0) seconds += bytes[d] / devices[d].bandwidth;
  return seconds > 0 ? static_cast<double>(parallel) / seconds : 0.0;
}

double measure_ram_bandwidth() {
  // 512 MiB, far beyond any last-level cache, read by every hardware thread; best of 3.
  // The probe `bench` uses: its vector loads reach the bandwidth where a scalar loop did
  // not (28 against 55-66 GB/s on a 2-core Zen 5, which halved plan's decode ceiling).
  return util::measure_read_bandwidth(size_t{512} << 20, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace sy::planner
