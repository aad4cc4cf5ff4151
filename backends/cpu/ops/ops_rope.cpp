// Rotary position embeddings: normal (adjacent pairs), NEOX (split halves) and the
// multi-section variant of Qwen's M-RoPE (NEOX pairing, each frequency index taking the
// position of its section's component; for text all components are equal, so it is NEOX).
// Optional per-pair frequency factors divide each pair's angle (Llama 3.1 RoPE scaling).
#include <cmath>
#include <string>

#include "ops.hpp"
#include "parallel_rows.hpp"

namespace sy::cpu {

Status rope(const View& x, std::span<const int32_t> pos, const RopeParams& p, OpScratch* scratch, ThreadPool* pool) {
  const int64_t head_dim = x.ne[0], n_tokens = x.ne[2];
  if (p.n_dims <= 0 || p.n_dims > head_dim || p.n_dims % 2 != 0)
    return error::invalid_argument("cpu: rope: n_dims " + std::to_string(p.n_dims) +
                                   " must be even and at most the head size " + std::to_string(head_dim));
  const size_t want = static_cast<size_t>(n_tokens) * (p.mode == RopeMode::multi ? 4 : 1);
  if (pos.size() != want)
    return error::invalid_argument("cpu: rope: " + std::to_string(pos.size()) + " positions given, " +
                                   std::to_string(want) + " needed");
  const int64_t half = p.n_dims / 2;
  if (!p.freq_factors.empty() && static_cast<int64_t>(p.freq_factors.size()) != half)
    return error::invalid_argument("cpu: rope: " + std::to_string(p.freq_factors.size()) +
                                   " frequency factors given, " + std::to_string(half) + " (n_dims / 2) needed");
  int sec_end[4] = {};
  if (p.mode == RopeMode::multi) {
    int acc = 0;
    for (int s = 0; s < 4; ++s) sec_end[s] = acc += p.sections[s];
    if (acc <= 0) return error::invalid_argument("cpu: rope: multi-section rope needs non-zero sections");
  }
  // A token's angles do not depend on the head: computed once per token, used for all heads.
  const int64_t stride = (2 * half + 15) / 16 * 16;
  const int64_t token_work = half * (64 + 4 * x.ne[1] * x.ne[3]);  // pow, cos, sin; then 4 per pair and head
  OpScratch local;
  float* bufs = (scratch ? *scratch : local).floats(static_cast<size_t>(stride * row_threads(pool, n_tokens, token_work)));
  for_rows(pool, n_tokens, token_work, [&](int64_t t0, int64_t t1, int thread) {
    float* cs = bufs + thread * stride;
    float* sn = cs + half;
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t i = 0; i < half; ++i) {
        float position;
        if (p.mode == RopeMode::multi) {
          // Sections repeat over the frequency indices when they cover fewer than n_dims/2.
          const int k = static_cast<int>(i % sec_end[3]);
          const int s = k < sec_end[0] ? 0 : k < sec_end[1] ? 1 : k < sec_end[2] ? 2 : 3;
          position = static_cast<float>(pos[static_cast<size_t>(s * n_tokens + t)]);
        } else {
          position = static_cast<float>(pos[static_cast<size_t>(t)]);
        }
        double theta = position * p.freq_scale *
                       std::pow(static_cast<double>(p.freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(p.n_dims));
        // As ggml divides theta by freq_factors[i]; a factor of exactly 1 leaves theta unchanged.
        if (!p.freq_factors.empty()) theta /= static_cast<double>(p.freq_factors[static_cast<size_t>(i)]);
        cs[i] = static_cast<float>(std::cos(theta));
        sn[i] = static_cast<float>(std::sin(theta));
      }
      for (int64_t i3 = 0; i3 < x.ne[3]; ++i3)
        for (int64_t h = 0; h < x.ne[1]; ++h)
          for (int64_t i = 0; i < half; ++i) {
            const int64_t a = p.mode == RopeMode::normal ? 2 * i : i;
            const int64_t b = p.mode == RopeMode::normal ? 2 * i + 1 : i + half;
            float& x0 = x.at(a, h, t, i3);
            float& x1 = x.at(b, h, t, i3);
            const float v0 = x0, v1 = x1;
            x0 = v0 * cs[i] - v1 * sn[i];
            x1 = v0 * sn[i] + v1 * cs[i];
          }
    }
  });
  return Status::ok();
}

}  // namespace sy::cpu
