#include "matmul.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace sy::cpu {
namespace {

Status check(const MatmulArgs& a, const DotKernel& k) {
  if (!k.dot)
    return error::unsupported("cpu: no matmul kernel for weights of type " +
                              std::string(storage_type_name(a.w_type)));
  if (a.k % storage_type_info(a.w_type).block_size != 0)
    return error::invalid_argument("cpu: matmul row length " + std::to_string(a.k) + " is not a multiple of " +
                                   std::string(storage_type_name(a.w_type)) + "'s block size");
  return Status::ok();
}

}  // namespace

size_t matmul_scratch_bytes(StorageType w_type, int64_t k, int64_t m, Isa isa) {
  const auto kern = dot_kernel(w_type, isa);
  if (!kern.dot) return 0;
  return static_cast<size_t>(*storage_row_bytes(kern.act_type, static_cast<uint64_t>(k)) * static_cast<uint64_t>(m));
}

Status matmul(const MatmulArgs& a, Isa isa, ThreadPool& pool, void* scratch) {
  const DotKernel kern = dot_kernel(a.w_type, isa);
  if (auto st = check(a, kern); !st) return st;
  const size_t w_row = *storage_row_bytes(a.w_type, static_cast<uint64_t>(a.k));
  const size_t a_row = *storage_row_bytes(kern.act_type, static_cast<uint64_t>(a.k));
  auto* act = static_cast<uint8_t*>(scratch);
  pool.run(a.m, [&](int64_t i, int) { kern.quantize_act(a.k, a.x + i * a.k, act + static_cast<size_t>(i) * a_row); });

  // Tasks: chunks of weight rows. For GEMV (one activation row) each thread should stream
  // long contiguous ranges, which the hardware prefetchers follow; a few chunks per thread
  // still balance the load. For GEMM, 16 rows keep a chunk's weights in cache while tiles
  // of activation rows pass over them.
  const int64_t kRowChunk =
      a.m == 1 ? std::max<int64_t>(16, a.rows / (2 * static_cast<int64_t>(pool.size()))) : 16;
  constexpr int64_t kActTile = 32;
  const int64_t chunks = (a.rows + kRowChunk - 1) / kRowChunk;
  const auto* w = static_cast<const uint8_t*>(a.w);
  pool.run(chunks, [&](int64_t c, int) {
    const int64_t r0 = c * kRowChunk, r1 = std::min(a.rows, r0 + kRowChunk);
    for (int64_t t0 = 0; t0 < a.m; t0 += kActTile) {
      const int64_t t1 = std::min(a.m, t0 + kActTile);
      for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* wr = w + static_cast<size_t>(r) * w_row;
        int64_t i = t0;
        if (kern.dot4)
          for (; i + 4 <= t1; i += 4) {
            float out[4];
            kern.dot4(a.k, wr, act + static_cast<size_t>(i) * a_row, a_row, out);
            for (int j = 0; j < 4; ++j) a.y[(i + j) * a.rows + r] = out[j];
          }
        for (; i < t1; ++i) a.y[i * a.rows + r] = kern.dot(a.k, wr, act + static_cast<size_t>(i) * a_row);
      }
    }
  });
  return Status::ok();
}

Status matmul_reference(const MatmulArgs& a) {
  const DotKernel kern = dot_kernel_scalar(a.w_type);
  if (auto st = check(a, kern); !st) return st;
  const size_t w_row = *storage_row_bytes(a.w_type, static_cast<uint64_t>(a.k));
  std::vector<uint8_t> act(*storage_row_bytes(kern.act_type, static_cast<uint64_t>(a.k)));
  for (int64_t i = 0; i < a.m; ++i) {
    kern.quantize_act(a.k, a.x + i * a.k, act.data());
    for (int64_t r = 0; r < a.rows; ++r)
      a.y[i * a.rows + r] = kern.dot(a.k, static_cast<const uint8_t*>(a.w) + static_cast<size_t>(r) * w_row, act.data());
  }
  return Status::ok();
}

}  // namespace sy::cpu
