// Row-wise kernels, one block per row, F32 rows with any byte strides: rms_norm and l2_norm
// (sums of squares in double, as the CPU's reference) and softmax (max, then exp, sum in
// double). Compiled with -fmad=false, like every file whose results are compared closely.
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/launch.hpp"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256;

// `identity` fills the lanes of warp 0 past the number of warps (0 for sums, -inf for maxima).
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity, T* shared) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? shared[threadIdx.x] : identity;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x == 0) shared[0] = v;
  __syncthreads();
  v = shared[0];
  __syncthreads();  // shared[] may be reused by the caller's next reduction
  return v;
}

struct Sum {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__global__ void rows_kernel(RowOp which, const NodeRecord* rp) {
  __shared__ double dshared[32];
  __shared__ float fshared[32];
  const NodeRecord& r = *rp;
  const int64_t n = r.ne[0][0];
  const int64_t row = blockIdx.x;
  const int64_t i1 = row % r.ne[0][1], i2 = (row / r.ne[0][1]) % r.ne[0][2], i3 = row / (r.ne[0][1] * r.ne[0][2]);
  auto x = [&](int64_t i) { return *at<const float>(r, 1, i, i1, i2, i3); };
  auto y = [&](int64_t i) { return at<float>(r, 0, i, i1, i2, i3); };
  if (which == RowOp::softmax) {
    float mx = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = fmaxf(mx, x(i));
    mx = block_reduce(mx, Max{}, -INFINITY, fshared);
    if (mx == -INFINITY) {  // everything masked: zeros, not NaN (the CPU's definition)
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) *y(i) = 0.0f;
      return;
    }
    double sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += expf(x(i) - mx);
    sum = block_reduce(sum, Sum{}, 0.0, dshared);
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) *y(i) = expf(x(i) - mx) * inv;
    return;
  }
  double ss = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double v = x(i);
    ss += v * v;
  }
  ss = block_reduce(ss, Sum{}, 0.0, dshared);
  const float eps = r.fp[0];
  const float s = which == RowOp::rms_norm ? static_cast<float>(1.0 / sqrt(ss / static_cast<double>(n) + eps))
                                           : 1.0f / fmaxf(static_cast<float>(sqrt(ss)), eps);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) *y(i) = x(i) * s;
}

}  // namespace

int launch_rows(RowOp which, const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n_rows = rows(host, 0);
  if (n_rows > 0x7fffffff) return static_cast<int>(cudaErrorInvalidConfiguration);
  rows_kernel<<<static_cast<unsigned>(n_rows), kBlock, 0, stream>>>(which, rec);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
