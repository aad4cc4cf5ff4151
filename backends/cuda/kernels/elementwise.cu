// Element-wise kernels over any 4-D layout (byte strides from the record), F32. The math
// follows the CPU's scalar reference (backends/cpu/ops/ops_basic.cpp) operation by operation,
// and the file is compiled with -fmad=false so no multiply-add is fused where the CPU does not.
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/launch.hpp"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256;

__device__ float apply(Unary f, float v, float s) {
  switch (f) {
    case Unary::silu: return v / (1.0f + expf(-v));
    case Unary::sigmoid: return 1.0f / (1.0f + expf(-v));
    case Unary::softplus: return v > 20.f ? v : log1pf(expf(v));
    case Unary::gelu: {
      const float k = 0.7978845608028654f;  // sqrt(2/pi): the tanh approximation, as the CPU
      return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
    }
    case Unary::scale: return v * s;
  }
  return v;
}

__global__ void unary_kernel(Unary f, const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 x = unflatten(r, i);
    *at<float>(r, 0, x.i0, x.i1, x.i2, x.i3) = apply(f, *at<const float>(r, 1, x.i0, x.i1, x.i2, x.i3), r.fp[0]);
  }
}

// b broadcasts where its size is 1: index 0 there.
template <bool kAdd>
__global__ void binary_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 x = unflatten(r, i);
    const float a = *at<const float>(r, 1, x.i0, x.i1, x.i2, x.i3);
    const float b = *at<const float>(r, 2, r.ne[2][0] == 1 ? 0 : x.i0, r.ne[2][1] == 1 ? 0 : x.i1,
                                     r.ne[2][2] == 1 ? 0 : x.i2, r.ne[2][3] == 1 ? 0 : x.i3);
    *at<float>(r, 0, x.i0, x.i1, x.i2, x.i3) = kAdd ? a + b : a * b;
  }
}

__global__ void swiglu_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 x = unflatten(r, i);
    const float g = *at<const float>(r, 1, x.i0, x.i1, x.i2, x.i3);
    const float u = *at<const float>(r, 2, x.i0, x.i1, x.i2, x.i3);
    *at<float>(r, 0, x.i0, x.i1, x.i2, x.i3) = g / (1.0f + expf(-g)) * u;
  }
}

}  // namespace

int launch_unary(Unary which, const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  unary_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(which, rec, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_binary_add(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  binary_kernel<true><<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_binary_mul(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  binary_kernel<false><<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_swiglu(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  swiglu_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
