#include "seq_ops.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "parallel_rows.hpp"

namespace sy::cpu {

Status conv1d_causal(const View& x, const float* w, int64_t K, float* state, const View& y, ThreadPool* pool) {
  const int64_t C = x.ne[0], T = x.ne[1];
  if (!x.same_shape(y)) return error::invalid_argument("cpu: conv1d: input and output shapes differ");
  if (K < 1) return error::invalid_argument("cpu: conv1d: the kernel needs at least one tap");
  // The input as seen by the kernel: K-1 state rows, then the T new rows.
  auto in = [&](int64_t c, int64_t tau) -> float {
    return tau < 0 ? state[(K - 1 + tau) * C + c] : x.at(c, tau);
  };
  // Channels are independent (their own taps and state column): ranges of them per thread.
  for_rows(pool, C, T * K, [&](int64_t c0, int64_t c1, int) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = c0; c < c1; ++c) {
        float s = 0;
        for (int64_t k = 0; k < K; ++k) s += w[c * K + k] * in(c, t - (K - 1) + k);
        y.at(c, t) = s;
      }
    // New state: the last K-1 rows of [state; x]. In place: row r reads row r + T >= r of
    // the old state (or x), so ascending order never reads an overwritten row.
    for (int64_t r = 0; r < K - 1; ++r)
      for (int64_t c = c0; c < c1; ++c) state[r * C + c] = in(c, T - (K - 1) + r);
  });
  return Status::ok();
}

namespace {

// One value head over all T tokens (its state stays in cache from token to token). The
// loops run i outer, j inner so that they vectorize over j, and each sum over i still adds
// its terms in ascending i from 0.f, as S^T k and S^T q are defined; fusing the decay into
// the first pass and the update into the second reads each S row as the unfused loops would.
[[gnu::always_inline]] inline void delta_head(const DeltaNetArgs& a, int64_t h, float* buf) {
  const int64_t dk = a.q.ne[0], hk = a.q.ne[1], T = a.q.ne[2], dv = a.v.ne[0], kh = h % hk;
  float *kt = buf, *qt = kt + dk, *s = qt + dk, *kv = s + dv, *o = kv + dv;
  float* S = a.state + h * dk * dv;
  for (int64_t t = 0; t < T; ++t) {
    const float decay = std::exp(a.g.at(h, t));
    const float beta = a.beta.at(h, t);
    for (int64_t i = 0; i < dk; ++i) kt[i] = a.k.at(i, kh, t), qt[i] = a.q.at(i, kh, t);
    for (int64_t j = 0; j < dv; ++j) s[j] = 0.f;
    for (int64_t i = 0; i < dk; ++i) {
      float* row = S + i * dv;
      const float ki = kt[i];
      for (int64_t j = 0; j < dv; ++j) {
        row[j] *= decay;
        s[j] += row[j] * ki;
      }
    }
    for (int64_t j = 0; j < dv; ++j) {
      kv[j] = beta * (a.v.at(j, h, t) - s[j]);
      o[j] = 0.f;
    }
    for (int64_t i = 0; i < dk; ++i) {
      float* row = S + i * dv;
      const float ki = kt[i], qi = qt[i];
      for (int64_t j = 0; j < dv; ++j) {
        row[j] += ki * kv[j];
        o[j] += row[j] * qi;
      }
    }
    for (int64_t j = 0; j < dv; ++j) a.out.at(j, h, t) = o[j];
  }
}

void delta_head_sse2(const DeltaNetArgs& a, int64_t h, float* buf) { delta_head(a, h, buf); }

// The same loops compiled 8 wide. AVX2 without FMA: every product is rounded before its add
// as on the baseline path, so the results are the same bits on every ISA path.
[[gnu::target("avx2")]] void delta_head_avx2(const DeltaNetArgs& a, int64_t h, float* buf) { delta_head(a, h, buf); }

}  // namespace

Status delta_net(const DeltaNetArgs& a, OpScratch* scratch, ThreadPool* pool, Isa isa) {
  const int64_t dk = a.q.ne[0], hk = a.q.ne[1], T = a.q.ne[2];
  const int64_t dv = a.v.ne[0], hv = a.v.ne[1];
  if (!a.k.same_shape(a.q) || a.v.ne[2] != T || hv % hk != 0 || a.g.ne[0] != hv || a.beta.ne[0] != hv ||
      !a.out.same_shape(a.v))
    return error::invalid_argument("cpu: delta_net: inconsistent shapes (q/k [d_k, key heads, T], v/out [d_v, value "
                                   "heads, T] with value heads a multiple of key heads, g/beta [value heads, T])");
  // Per thread: k, q, S^T k, the delta and the output row; 64-byte strides keep threads
  // off each other's cache lines.
  const int64_t per_thread = (2 * dk + 3 * dv + 15) / 16 * 16;
  // A head costs about 4 dk dv flops per token; below ~64k in all, waking threads costs more.
  const bool threaded = pool && pool->size() > 1 && hv > 1 && 4 * T * dk * dv * hv >= (1 << 16);
  const int n_threads = threaded ? pool->size() : 1;
  OpScratch local;
  float* buf = (scratch ? *scratch : local).floats(static_cast<size_t>(per_thread * n_threads));
  const auto head = isa == Isa::scalar ? delta_head_sse2 : delta_head_avx2;
  if (!threaded) {
    for (int64_t h = 0; h < hv; ++h) head(a, h, buf);
    return Status::ok();
  }
  pool->run(hv, [&](int64_t h, int thread) { head(a, h, buf + thread * per_thread); });
  return Status::ok();
}

}  // namespace sy::cpu
