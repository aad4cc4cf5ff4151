// The portable weight kernels for every type dequant.cuh decodes: matmul (one warp per output:
// the row's elements decoded and multiplied by f32 activations, lanes striding the row,
// then a shuffle sum), matmul_id (the same per (slot, token) with the expert from ids) and
// get_rows (one thread per output element). Activations stay f32: the conformance bounds
// allow a device "with its own or no activation quantization" (tolerance.cpp). The legacy
// types and K-quants take the q8 path first (matmul_q8.cu); tensor-core GEMM for prefill is
// planned (issue 20).
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/dequant.cuh"
#include "kernels/launch.hpp"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256, kWarps = kBlock / 32;

__device__ const uint8_t* bytes(uint64_t addr) { return reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(addr)); }

// dst[r, c] = W row r . X column c; c runs over X's columns (ne1 x ne2 x ne3).
__global__ void matmul_kernel(const NodeRecord* rp, int64_t outputs) {
  const NodeRecord& r = *rp;
  const int64_t k = r.ne[1][0], rows = r.ne[1][1];
  const int lane = threadIdx.x & 31;
  for (int64_t o = (blockIdx.x * static_cast<int64_t>(kWarps)) + (threadIdx.x >> 5); o < outputs;
       o += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t row = o % rows, col = o / rows;
    const int64_t c1 = col % r.ne[2][1], c2 = (col / r.ne[2][1]) % r.ne[2][2], c3 = col / (r.ne[2][1] * r.ne[2][2]);
    const uint8_t* w = bytes(r.addr[1] + row * r.nb[1][1]);
    const float* x = at<const float>(r, 2, 0, c1, c2, c3);
    const int64_t xs = r.nb[2][0] / 4;
    float acc = 0;
    for (int64_t i = lane; i < k; i += 32) acc += dequant(r.type[1], w, i) * x[i * xs];
    acc = warp_sum(acc);
    if (lane == 0) *at<float>(r, 0, row, c1, c2, c3) = acc;
  }
}

// dst[r, j, t] = W[ids[j, t]] row r . X[:, X.ne1 == 1 ? 0 : j, t].
__global__ void matmul_id_kernel(const NodeRecord* rp, int64_t outputs) {
  const NodeRecord& r = *rp;
  const int64_t k = r.ne[1][0], rows = r.ne[1][1], experts = r.ne[1][2], used = r.ne[3][0];
  const int lane = threadIdx.x & 31;
  for (int64_t o = (blockIdx.x * static_cast<int64_t>(kWarps)) + (threadIdx.x >> 5); o < outputs;
       o += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t row = o % rows, pair = o / rows, j = pair % used, t = pair / used;
    const int32_t e = *at<const int32_t>(r, 3, j, t, 0, 0);
    float acc = 0;
    if (e >= 0 && e < experts) {  // an id out of range gives 0 (supports() cannot see data)
      const uint8_t* w = bytes(r.addr[1] + row * r.nb[1][1] + e * r.nb[1][2]);
      const float* x = at<const float>(r, 2, 0, r.ne[2][1] == 1 ? 0 : j, t, 0);
      const int64_t xs = r.nb[2][0] / 4;
      for (int64_t i = lane; i < k; i += 32) acc += dequant(r.type[1], w, i) * x[i * xs];
    }
    acc = warp_sum(acc);
    if (lane == 0) *at<float>(r, 0, row, j, t, 0) = acc;
  }
}

// dst[:, row] = table row ids[row], decoded; ids flattened over its own shape.
__global__ void get_rows_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  const int64_t table_rows = r.ne[1][1];
  for (int64_t flat = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; flat < n;
       flat += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 d = unflatten(r, flat);
    const int64_t row = d.i1 + r.ne[0][1] * (d.i2 + r.ne[0][2] * d.i3);
    const int64_t a = row % r.ne[2][0], b = (row / r.ne[2][0]) % r.ne[2][1], c = row / (r.ne[2][0] * r.ne[2][1]);
    const int32_t id = *at<const int32_t>(r, 2, a, b, c, 0);
    const float v = id >= 0 && id < table_rows ? dequant(r.type[1], bytes(r.addr[1] + id * r.nb[1][1]), d.i0)
                                               : __int_as_float(0x7fc00000);  // a bad id shows as NaN
    *at<float>(r, 0, d.i0, d.i1, d.i2, d.i3) = v;
  }
}

unsigned warp_grid(int64_t outputs) { return grid_for(outputs, kWarps); }

}  // namespace

int launch_matmul(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t outputs = host.ne[1][1] * rows(host, 2);
  matmul_kernel<<<warp_grid(outputs), kBlock, 0, stream>>>(rec, outputs);
  return static_cast<int>(cudaGetLastError());
}

int launch_matmul_id(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t outputs = host.ne[1][1] * host.ne[3][0] * host.ne[3][1];
  matmul_id_kernel<<<warp_grid(outputs), kBlock, 0, stream>>>(rec, outputs);
  return static_cast<int>(cudaGetLastError());
}

int launch_get_rows(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  get_rows_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
