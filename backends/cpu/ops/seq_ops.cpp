#include "seq_ops.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace sy::cpu {

Status conv1d_causal(const View& x, const float* w, int64_t K, float* state, const View& y) {
  const int64_t C = x.ne[0], T = x.ne[1];
  if (!x.same_shape(y)) return error::invalid_argument("cpu: conv1d: input and output shapes differ");
  if (K < 1) return error::invalid_argument("cpu: conv1d: the kernel needs at least one tap");
  // The input as seen by the kernel: K-1 state rows, then the T new rows.
  auto in = [&](int64_t c, int64_t tau) -> float {
    return tau < 0 ? state[(K - 1 + tau) * C + c] : x.at(c, tau);
  };
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += w[c * K + k] * in(c, t - (K - 1) + k);
      y.at(c, t) = s;
    }
  // New state: the last K-1 rows of [state; x]. In place: row r reads row r + T >= r of
  // the old state (or x), so ascending order never reads an overwritten row.
  for (int64_t r = 0; r < K - 1; ++r)
    for (int64_t c = 0; c < C; ++c) state[r * C + c] = in(c, T - (K - 1) + r);
  return Status::ok();
}

Status delta_net(const DeltaNetArgs& a, OpScratch* scratch) {
  const int64_t dk = a.q.ne[0], hk = a.q.ne[1], T = a.q.ne[2];
  const int64_t dv = a.v.ne[0], hv = a.v.ne[1];
  if (!a.k.same_shape(a.q) || a.v.ne[2] != T || hv % hk != 0 || a.g.ne[0] != hv || a.beta.ne[0] != hv ||
      !a.out.same_shape(a.v))
    return error::invalid_argument("cpu: delta_net: inconsistent shapes (q/k [d_k, key heads, T], v/out [d_v, value "
                                   "heads, T] with value heads a multiple of key heads, g/beta [value heads, T])");
  OpScratch local;
  float* kv = (scratch ? *scratch : local).floats(static_cast<size_t>(dv));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < hv; ++h) {
      const int64_t kh = h % hk;
      float* S = a.state + h * dk * dv;
      const float decay = std::exp(a.g.at(h, t));
      const float beta = a.beta.at(h, t);
      for (int64_t i = 0; i < dk * dv; ++i) S[i] *= decay;
      for (int64_t j = 0; j < dv; ++j) {
        float s = 0;
        for (int64_t i = 0; i < dk; ++i) s += S[i * dv + j] * a.k.at(i, kh, t);
        kv[j] = beta * (a.v.at(j, h, t) - s);
      }
      for (int64_t i = 0; i < dk; ++i) {
        const float ki = a.k.at(i, kh, t);
        for (int64_t j = 0; j < dv; ++j) S[i * dv + j] += ki * kv[j];
      }
      for (int64_t j = 0; j < dv; ++j) {
        float o = 0;
        for (int64_t i = 0; i < dk; ++i) o += S[i * dv + j] * a.q.at(i, kh, t);
        a.out.at(j, h, t) = o;
      }
    }
  return Status::ok();
}

}  // namespace sy::cpu
