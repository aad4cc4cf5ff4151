// Sequence ops of linear-attention layers (Qwen3.5/3.6 gated delta-net): the causal
// depthwise convolution over time and the delta-rule recurrence, both carrying state
// across calls so prefill in chunks and token-by-token decode give the same result.
#pragma once

#include <cstdint>

#include "isa.hpp"
#include "ops.hpp"
#include "thread_pool.hpp"

namespace sy::cpu {

/// y[c, t] = sum_k w[c*K + k] * in[c, t - (K-1) + k], where in[., tau < 0] comes from
/// `state` (K-1 rows of `channels`, oldest first). x and y are [channels, T] views;
/// afterwards state holds the last K-1 input rows. y may not alias x.
/// With a pool, ranges of channels run on its threads (same arithmetic per channel).
Status conv1d_causal(const View& x, const float* w, int64_t K, float* state, const View& y, ThreadPool* pool = nullptr);

struct DeltaNetArgs {
  View q, k;          ///< [d_k, n_k_heads, T]; q already scaled, q and k already normalised
  View v;             ///< [d_v, n_v_heads, T]; value head h uses key head h % n_k_heads
  View g;             ///< [n_v_heads, T]: log of the per-step decay (<= 0)
  View beta;          ///< [n_v_heads, T]: write strength
  float* state = nullptr;  ///< n_v_heads x d_k x d_v, updated in place
  View out;           ///< [d_v, n_v_heads, T]
};

/// Per head and token: S *= exp(g); S += k (beta (v - S^T k))^T; out = S^T q.
/// Value heads are independent, so with a pool they are spread over its threads; each
/// head's arithmetic is the same on any thread count (results do not depend on it).
/// scratch, when given, is sized here on the calling thread and reused across calls.
/// isa: avx2 or avx512 run the loops 8 wide (the same bits as scalar).
Status delta_net(const DeltaNetArgs& a, OpScratch* scratch = nullptr, ThreadPool* pool = nullptr,
                 Isa isa = Isa::scalar);

}  // namespace sy::cpu
