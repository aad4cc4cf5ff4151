#include "gemm_blocks.hpp"

#include <algorithm>

namespace sy::cpu {
namespace {

constexpr int64_t kActTile = 32;

// Rows per task. With one activation row per block (decode) each task should stream a
// long contiguous range, which the hardware prefetchers follow, and a few tasks per
// thread still balance the load; all blocks count, so 8 chosen experts on 2 threads give
// one expert per task rather than 4 slivers of each. With several rows (prefill) 16 rows
// keep a chunk's weights in cache while the tiles of activation rows pass over them.
int64_t row_chunk(const GemmPlan& p, std::span<const GemmBlock> blocks, int threads) {
  int64_t max_m = 0;
  for (const auto& b : blocks) max_m = std::max(max_m, b.m);
  if (max_m >= 4) return 16;
  constexpr int64_t kTasksPerThread = 2;
  const int64_t per_task = p.rows * static_cast<int64_t>(blocks.size()) / (kTasksPerThread * threads);
  return std::clamp<int64_t>((per_task + 15) / 16 * 16, 16, std::max<int64_t>(16, p.rows));
}

// Interleaved weights: groups of 16 rows (chunks are multiples of 16), four activation
// rows per call while there are four.
void product_groups(const GemmPlan& p, int q, const GemmBlock& b, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const DotKernel& kern = p.kern[q];
  const auto out = [&](int64_t i) { return p.y[q] + (b.out ? b.out[i] : i) * p.rows; };
  const auto act = [&](int64_t i) { return b.act + static_cast<size_t>(i) * p.a_stride; };
  for (int64_t r = r0; r < r1; r += 16) {
    const uint8_t* wg = b.w[q] + static_cast<size_t>(r) * p.w_row[q];  // group r / 16: 16 rows' bytes each
    int64_t i = t0;
    for (; i + 4 <= t1; i += 4) {
      float* const o[4] = {out(i) + r, out(i + 1) + r, out(i + 2) + r, out(i + 3) + r};
      kern.group4(p.k, wg, act(i), p.a_stride, o);
    }
    for (; i < t1; ++i) {
      float* const o[1] = {out(i) + r};
      kern.group1(p.k, wg, act(i), p.a_stride, o);
    }
  }
}

void product(const GemmPlan& p, int q, const GemmBlock& b, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const DotKernel& kern = p.kern[q];
  if (kern.group1) return product_groups(p, q, b, r0, r1, t0, t1);
  const auto out = [&](int64_t i) { return p.y[q] + (b.out ? b.out[i] : i) * p.rows; };
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* wr = b.w[q] + static_cast<size_t>(r) * p.w_row[q];
    int64_t i = t0;
    if (kern.dot4)
      for (; i + 4 <= t1; i += 4) {
        float o[4];
        kern.dot4(p.k, wr, b.act + static_cast<size_t>(i) * p.a_stride, p.a_stride, o);
        for (int j = 0; j < 4; ++j) out(i + j)[r] = o[j];
      }
    for (; i < t1; ++i) out(i)[r] = row_dot(kern, p.k, wr, b.act + static_cast<size_t>(i) * p.a_stride);
  }
}

}  // namespace

void run_gemm_blocks(const GemmPlan& p, std::span<const GemmBlock> blocks, ThreadPool& pool) {
  if (blocks.empty() || p.rows == 0) return;
  const int64_t chunk = row_chunk(p, blocks, pool.size());
  const int64_t chunks = (p.rows + chunk - 1) / chunk;
  pool.run(static_cast<int64_t>(blocks.size()) * chunks, [&](int64_t task, int) {
    const GemmBlock& b = blocks[static_cast<size_t>(task / chunks)];
    const int64_t r0 = task % chunks * chunk, r1 = std::min(p.rows, r0 + chunk);
    for (int64_t t0 = 0; t0 < b.m; t0 += kActTile) {
      const int64_t t1 = std::min(b.m, t0 + kActTile);
      for (int q = 0; q < p.products; ++q) product(p, q, b, r0, r1, t0, t1);
      if (p.glu.fn)
        for (int64_t i = t0; i < t1; ++i) {
          const int64_t o = (b.out ? b.out[i] : i) * p.rows + r0;
          p.glu.fn(p.y[0] + o, p.y[1] + o, p.glu.h + o, r1 - r0);
        }
    }
  });
}

}  // namespace sy::cpu
