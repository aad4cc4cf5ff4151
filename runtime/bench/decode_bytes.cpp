#include "bench/decode_bytes.hpp"

#include <algorithm>

namespace sy::bench {

DecodeBytes decode_bytes(const planner::ModelDesc& m, uint64_t kv_bytes_per_token, uint64_t state_bytes,
                         double context) {
  DecodeBytes b;
  const bool tied = std::none_of(m.tensors.begin(), m.tensors.end(),
                                 [](const TensorDesc& t) { return t.name == "output.weight"; });
  const double expert_share = m.hp.n_expert > 0 ? static_cast<double>(m.hp.n_expert_used) / static_cast<double>(m.hp.n_expert) : 1.0;
  for (const auto& t : m.tensors) {
    const auto bytes = static_cast<double>(t.bytes);
    const int64_t layer = planner::layer_of(t.name);
    if (layer >= m.hp.n_layer) continue;
    if (t.name == "output.weight") {
      b.head += bytes;
    } else if (t.name == "token_embd.weight") {
      if (tied) b.head += bytes;
      else b.embd_row += m.hp.n_vocab > 0 ? bytes / static_cast<double>(m.hp.n_vocab) : 0.0;
    } else if (layer < 0) {
      b.other += bytes;
    } else if (planner::is_routed_expert(t.name)) {
      b.experts += bytes * expert_share;
    } else {
      b.dense += bytes;
    }
  }
  b.kv = static_cast<double>(kv_bytes_per_token) * context;
  b.state = 2.0 * static_cast<double>(state_bytes);
  return b;
}

double mean_generation_context(int64_t depth, int64_t n) {
  return static_cast<double>(depth) + static_cast<double>(n + 1) / 2.0;
}

}  // namespace sy::bench
