// The parallel core of matmul and matmul_id: blocks of activation rows, already converted
// to the dot type, against one weight matrix each, or against two matrices that share the
// input (the gate and up projections of an FFN). Every block of a call runs in a single
// parallel region, so a MoE layer costs one region for all its chosen experts instead of
// one per expert, and a gate/up pair shares both the conversion and the region.
#pragma once

#include <cstdint>
#include <span>

#include "dot.hpp"
#include "thread_pool.hpp"

namespace sy::cpu {

/// h[i] = glu(gate[i], up[i]) for n consecutive elements: how a fused gate/up product
/// combines its two outputs (the executor passes the SwiGLU op itself, so a fused result
/// equals the unfused graph's).
using GluFn = void (*)(const float* gate, const float* up, float* h, int64_t n);

/// The optional combination of a gate/up pair: h has the outputs' layout.
struct Glu {
  GluFn fn = nullptr;
  float* h = nullptr;
};

/// One weight matrix (or a gate/up pair) against m activation rows.
struct GemmBlock {
  const uint8_t* w[2] = {nullptr, nullptr};  ///< rows x k weights of each product
  const uint8_t* act = nullptr;              ///< m converted rows, GemmPlan::a_stride bytes apart
  int64_t m = 0;
  const int64_t* out = nullptr;              ///< output row of activation row i; nullptr: row i
};

/// What the blocks of one call share.
struct GemmPlan {
  int products = 1;                  ///< 1, or 2 for a gate/up pair
  DotKernel kern[2];
  size_t w_row[2] = {0, 0};          ///< bytes per weight row of each product
  int64_t k = 0, rows = 0;
  size_t a_stride = 0;               ///< bytes between a block's activation rows
  float* y[2] = {nullptr, nullptr};  ///< output row j of product p starts at y[p] + j * rows
  Glu glu;                           ///< with fn: also h = fn(y[0], y[1]), same places
};

/// Runs every block in one parallel region. Tasks are (block, chunk of weight rows); a
/// task passes the block's activation rows over its chunk in tiles while the chunk's
/// weights stay in cache, and computes both products of a pair before combining them.
void run_gemm_blocks(const GemmPlan& p, std::span<const GemmBlock> blocks, ThreadPool& pool);

/// Converts n activation rows with kern.quantize_act: row i from src(i) to dst + i * a_row.
/// Threaded only when the rows are long enough to pay for a parallel region (decode's one
/// row is converted by the caller).
template <class Src>
void convert_rows(const DotKernel& kern, int64_t k, int64_t n, const Src& src, uint8_t* dst, size_t a_row,
                  ThreadPool& pool) {
  constexpr int64_t kParallelElements = int64_t{1} << 15;
  const auto one = [&](int64_t i, int) { kern.quantize_act(k, src(i), dst + static_cast<size_t>(i) * a_row); };
  if (n * k < kParallelElements)
    for (int64_t i = 0; i < n; ++i) one(i, 0);
  else
    pool.run(n, one);
}

}  // namespace sy::cpu
