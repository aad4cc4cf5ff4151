// Rotary position embeddings (normal, NEOX and multi-section), as the CPU's scalar reference
// (backends/cpu/ops/ops_rope.cpp): the angle in double from position x scale (a float
// product, as there) and base^(-2i/n_dims), optionally divided by the pair's frequency factor,
// then cos and sin rounded to float. One thread per element of the destination: the first
// element of a pair rotates both, the second does nothing, those past n_dims are copied.
// x and y may be the same memory.
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/launch.hpp"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256;

__global__ void rope_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  const int mode = r.ip[0], n_dims = r.ip[1];
  const int64_t half = n_dims / 2, n_tokens = r.ne[0][2];
  const float base = r.fp[0], scale = r.fp[1] == 0 ? 1.f : r.fp[1];
  int sec_end[4] = {r.ip[2], r.ip[2] + r.ip[3], r.ip[2] + r.ip[3] + r.ip[4], r.ip[2] + r.ip[3] + r.ip[4] + r.ip[5]};
  for (int64_t flat = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; flat < n;
       flat += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 x = unflatten(r, flat);
    const int64_t e = x.i0;
    if (e >= n_dims) {
      *at<float>(r, 0, e, x.i1, x.i2, x.i3) = *at<const float>(r, 1, e, x.i1, x.i2, x.i3);
      continue;
    }
    const bool first = mode == 0 ? (e % 2 == 0) : (e < half);
    if (!first) continue;
    const int64_t i = mode == 0 ? e / 2 : e;
    const int64_t a = mode == 0 ? 2 * i : i, b = mode == 0 ? 2 * i + 1 : i + half;
    const int64_t t = x.i2;
    const int32_t* pos = reinterpret_cast<const int32_t*>(static_cast<uintptr_t>(r.addr[2]));
    float position;
    if (mode == 2) {
      // Sections repeat over the frequency indices when they cover fewer than n_dims/2.
      const int k = static_cast<int>(i % sec_end[3]);
      const int s = k < sec_end[0] ? 0 : k < sec_end[1] ? 1 : k < sec_end[2] ? 2 : 3;
      position = static_cast<float>(pos[s * n_tokens + t]);
    } else {
      position = static_cast<float>(pos[t]);
    }
    double theta = static_cast<double>(position * scale) *
                   pow(static_cast<double>(base), -2.0 * static_cast<double>(i) / static_cast<double>(n_dims));
    if (r.n_src > 2) theta /= static_cast<double>(reinterpret_cast<const float*>(static_cast<uintptr_t>(r.addr[3]))[i]);
    const float cs = static_cast<float>(cos(theta)), sn = static_cast<float>(sin(theta));
    const float v0 = *at<const float>(r, 1, a, x.i1, x.i2, x.i3), v1 = *at<const float>(r, 1, b, x.i1, x.i2, x.i3);
    *at<float>(r, 0, a, x.i1, x.i2, x.i3) = v0 * cs - v1 * sn;
    *at<float>(r, 0, b, x.i1, x.i2, x.i3) = v0 * sn + v1 * cs;
  }
}

}  // namespace

int launch_rope(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  rope_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
