// The KV cache's two ops. set_rows writes f32 rows into a cache row by row (quantize.cuh). attention reads the caches
// through the block tables: one block per (token, head), its warps taking positions in turn
// with an online softmax each, merged at the end; a token sees the positions up to its own.
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/dequant.cuh"
#include "kernels/launch.hpp"
#include "kernels/quantize.cuh"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kAttnWarps = 4, kAttnThreads = kAttnWarps * 32;
constexpr int kMaxDk = static_cast<int>(kMaxHeadK), kMaxDvPerLane = static_cast<int>(kMaxHeadV / 32);

// Plain types: one thread per element. Row i of x goes to cell slots[i] (dims 0 and 1 of the
// cache packed as one row of x.ne0 elements).
__global__ void set_rows_plain(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  const int64_t k = r.ne[1][0];
  for (int64_t flat = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; flat < n;
       flat += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = flat % k, row = flat / k;
    const int64_t a = row % r.ne[1][1], b = (row / r.ne[1][1]) % r.ne[1][2], c = row / (r.ne[1][1] * r.ne[1][2]);
    const float v = *at<const float>(r, 1, i, a, b, c);
    const int32_t slot = *at<const int32_t>(r, 2, row, 0, 0, 0);
    if (slot < 0 || slot >= r.ne[0][2]) continue;
    uint8_t* cell = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(r.addr[0] + slot * r.nb[0][2]));
    switch (r.type[0]) {
      case ty::F32: reinterpret_cast<float*>(cell)[i] = v; break;
      case ty::F16: put16(cell + 2 * i, __half_as_ushort(__float2half_rn(v))); break;
      case ty::BF16: put16(cell + 2 * i, f32_to_bf16(v)); break;
    }
  }
}

// q8_0 and q4_0: one thread per 32-element block.
__global__ void set_rows_blocks(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  const int64_t blocks = r.ne[1][0] / 32;
  const bool q8 = r.type[0] == ty::Q8_0;
  for (int64_t flat = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; flat < n;
       flat += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t blk = flat % blocks, row = flat / blocks;
    const int64_t a = row % r.ne[1][1], b = (row / r.ne[1][1]) % r.ne[1][2], c = row / (r.ne[1][1] * r.ne[1][2]);
    const int32_t slot = *at<const int32_t>(r, 2, row, 0, 0, 0);
    if (slot < 0 || slot >= r.ne[0][2]) continue;
    float x[32];
    for (int j = 0; j < 32; ++j) x[j] = *at<const float>(r, 1, blk * 32 + j, a, b, c);
    uint8_t* out = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(r.addr[0] + slot * r.nb[0][2])) + blk * (q8 ? 34 : 18);
    if (q8)
      quantize_q8_0(x, out);
    else
      quantize_q4_0(x, out);
  }
}

// Slots: 0 out [dv, heads, tokens], 1 q [dk, heads, tokens], 2 K cache, 3 V cache [d, kv_heads,
// cells], 4 pos, 5 seq, 6 block tables [blocks, rows].
__global__ void attention_kernel(const NodeRecord* rp) {
  __shared__ float q[kMaxDk];
  __shared__ float wm[kAttnWarps], wl[kAttnWarps];
  __shared__ float wacc[kAttnWarps][kMaxDvPerLane * 32];
  const NodeRecord& r = *rp;
  const int64_t h = blockIdx.x, t = blockIdx.y;
  const int64_t dk = r.ne[1][0], dv = r.ne[3][0], heads = r.ne[1][1], kv_heads = r.ne[2][1];
  const int64_t kvh = h / (heads / kv_heads), block = r.ip[0];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int64_t i = threadIdx.x; i < dk; i += blockDim.x) q[i] = *at<const float>(r, 1, i, h, t, 0);
  __syncthreads();
  const int32_t pos = *at<const int32_t>(r, 4, t, 0, 0, 0), row = *at<const int32_t>(r, 5, t, 0, 0, 0);
  const int64_t visible = row >= 0 && row < r.ne[6][1] ? min(static_cast<int64_t>(pos) + 1, r.ne[6][0] * block) : 0;
  const float scale = r.fp[0];
  float m = -INFINITY, l = 0, acc[kMaxDvPerLane];
  for (int u = 0; u < kMaxDvPerLane; ++u) acc[u] = 0;
  for (int64_t p = warp; p < visible; p += kAttnWarps) {
    const int32_t blk = *at<const int32_t>(r, 6, p / block, row, 0, 0);
    if (blk < 0) continue;
    const int64_t slot = static_cast<int64_t>(blk) * block + p % block;
    if (slot >= r.ne[2][2]) continue;
    const uint8_t* kr = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(r.addr[2] + slot * r.nb[2][2] + kvh * r.nb[2][1]));
    const uint8_t* vr = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(r.addr[3] + slot * r.nb[3][2] + kvh * r.nb[3][1]));
    float dot = 0;
    for (int64_t i = lane; i < dk; i += 32) dot += q[i] * dequant(r.type[2], kr, i);
    const float s = warp_sum(dot) * scale;
    const float m_new = fmaxf(m, s), corr = expf(m - m_new), w = expf(s - m_new);
    l = l * corr + w;
    for (int u = 0; u < kMaxDvPerLane; ++u) {
      const int64_t j = lane + 32 * u;
      if (j < dv) acc[u] = acc[u] * corr + w * dequant(r.type[3], vr, j);
    }
    m = m_new;
  }
  if (lane == 0) {
    wm[warp] = m;
    wl[warp] = l;
  }
  for (int u = 0; u < kMaxDvPerLane; ++u) wacc[warp][lane + 32 * u] = acc[u];
  __syncthreads();
  float M = -INFINITY;
  for (int w = 0; w < kAttnWarps; ++w) M = fmaxf(M, wm[w]);
  float L = 0;
  for (int w = 0; w < kAttnWarps; ++w)
    if (wl[w] > 0) L += wl[w] * expf(wm[w] - M);
  for (int64_t j = threadIdx.x; j < dv; j += blockDim.x) {
    float o = 0;
    for (int w = 0; w < kAttnWarps; ++w)
      if (wl[w] > 0) o += wacc[w][j] * expf(wm[w] - M);
    *at<float>(r, 0, j, h, t, 0) = L > 0 ? o / L : 0.0f;  // a query that sees no key yields zeros
  }
}

}  // namespace

int launch_set_rows(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t rows_n = rows(host, 1);
  if (host.type[0] == ty::Q8_0 || host.type[0] == ty::Q4_0) {
    const int64_t n = rows_n * (host.ne[1][0] / 32);
    set_rows_blocks<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  } else {
    const int64_t n = rows_n * host.ne[1][0];
    set_rows_plain<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  }
  return static_cast<int>(cudaGetLastError());
}

int launch_attention(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const dim3 grid(static_cast<unsigned>(host.ne[1][1]), static_cast<unsigned>(host.ne[1][2]));
  attention_kernel<<<grid, kAttnThreads, 0, stream>>>(rec);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
