// The recurrent ops of hybrid models, as the CPU's reference (backends/cpu/ops/seq_ops.cpp):
// tokens in order, each naming its state slot. conv1d: one thread per channel, a window of
// the last K-1 inputs loaded from the slot's state when the slot changes and written back
// when it changes again (or at the end). delta_net: one thread per (value head, column j of
// the head's state): a column evolves on its own, so each thread walks the tokens and keeps
// its column in the state tensor, with the sums over i in ascending order from 0 as there.
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/launch.hpp"

namespace sy::cuda {
namespace {

constexpr int kBlock = 128;

__device__ float* f32p(uint64_t a) { return reinterpret_cast<float*>(static_cast<uintptr_t>(a)); }

// Slots: 0 y [ch, T], 1 x [ch, T], 2 w [K, ch] (dense), 3 state [(K-1) ch, slots], 4 slot ids [T].
__global__ void conv1d_kernel(const NodeRecord* rp) {
  const NodeRecord& r = *rp;
  const int64_t C = r.ne[1][0], T = r.ne[1][1], K = r.ne[2][0], slots = r.ne[3][1];
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= C) return;
  const float* w = f32p(r.addr[2]) + c * K;
  float win[kMaxConvTaps];
  int32_t cur = -1;
  auto state_of = [&](int32_t slot) { return f32p(r.addr[3] + slot * r.nb[3][1]); };
  for (int64_t t = 0; t < T; ++t) {
    const int32_t slot = *at<const int32_t>(r, 4, t, 0, 0, 0);
    if (slot != cur) {
      if (cur >= 0 && cur < slots)
        for (int64_t k = 0; k < K - 1; ++k) state_of(cur)[k * C + c] = win[k];
      cur = slot;
      for (int64_t k = 0; k < K - 1; ++k) win[k] = cur >= 0 && cur < slots ? state_of(cur)[k * C + c] : 0.f;
    }
    const float xv = *at<const float>(r, 1, c, t, 0, 0);
    float s = 0;
    for (int64_t k = 0; k < K - 1; ++k) s += w[k] * win[k];
    s += w[K - 1] * xv;
    *at<float>(r, 0, c, t, 0, 0) = s;
    for (int64_t k = 0; k + 1 < K - 1; ++k) win[k] = win[k + 1];
    if (K > 1) win[K - 2] = xv;
  }
  if (cur >= 0 && cur < slots)
    for (int64_t k = 0; k < K - 1; ++k) state_of(cur)[k * C + c] = win[k];
}

// Slots: 0 out [dv, hv, T], 1 q, 2 k [dk, hk, T], 3 v [dv, hv, T], 4 g, 5 beta [hv, T],
// 6 state [dk dv hv, slots], 7 slot ids [T].
__global__ void delta_net_kernel(const NodeRecord* rp) {
  const NodeRecord& r = *rp;
  const int64_t dk = r.ne[1][0], hk = r.ne[1][1], T = r.ne[1][2], dv = r.ne[3][0], hv = r.ne[3][1];
  const int64_t slots = r.ne[6][1];
  const int64_t id = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (id >= hv * dv) return;
  const int64_t h = id / dv, j = id % dv, kh = h % hk;
  for (int64_t t = 0; t < T; ++t) {
    const int32_t slot = *at<const int32_t>(r, 7, t, 0, 0, 0);
    if (slot < 0 || slot >= slots) {  // no state to read (the CPU refuses the node): zeros, not garbage
      *at<float>(r, 0, j, h, t, 0) = 0.f;
      continue;
    }
    float* S = f32p(r.addr[6] + slot * r.nb[6][1]) + h * dk * dv + j;  // column j; row i at i * dv
    const float decay = expf(*at<const float>(r, 4, h, t, 0, 0));
    const float beta = *at<const float>(r, 5, h, t, 0, 0);
    float s = 0.f;
    for (int64_t i = 0; i < dk; ++i) {
      const float v = S[i * dv] * decay;
      S[i * dv] = v;
      s += v * *at<const float>(r, 2, i, kh, t, 0);
    }
    const float kv = beta * (*at<const float>(r, 3, j, h, t, 0) - s);
    float o = 0.f;
    for (int64_t i = 0; i < dk; ++i) {
      const float v = S[i * dv] + *at<const float>(r, 2, i, kh, t, 0) * kv;
      S[i * dv] = v;
      o += v * *at<const float>(r, 1, i, kh, t, 0);
    }
    *at<float>(r, 0, j, h, t, 0) = o;
  }
}

}  // namespace

int launch_conv1d(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t C = host.ne[1][0];
  conv1d_kernel<<<static_cast<unsigned>((C + kBlock - 1) / kBlock), kBlock, 0, stream>>>(rec);
  return static_cast<int>(cudaGetLastError());
}

int launch_delta_net(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = host.ne[3][0] * host.ne[3][1];
  delta_net_kernel<<<static_cast<unsigned>((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(rec);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
