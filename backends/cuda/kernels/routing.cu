// Expert routing and the small data ops around it, as the CPU's reference
// (backends/cpu/exec/executor.cpp, ops/ops_data.cpp): top_k and argsort (descending, ties to
// the lower index) by ranking each element of a row against the others, expert_weights (one
// thread per token: the same float sum in the same order), moe_combine (terms added in
// expert order from 0) and concat.
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/launch.hpp"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256;

// Element i of a row comes before j when it is larger, or equal with a lower index.
__device__ bool before(float vi, int64_t i, float vj, int64_t j) { return vi > vj || (vi == vj && i < j); }

// One block per row; dst row gets the indices of ranks 0..k-1 (k = the row length for argsort).
__global__ void rank_kernel(const NodeRecord* rp, int64_t k) {
  const NodeRecord& r = *rp;
  const int64_t n = r.ne[1][0], row = blockIdx.x;
  const int64_t i1 = row % r.ne[1][1], i2 = (row / r.ne[1][1]) % r.ne[1][2], i3 = row / (r.ne[1][1] * r.ne[1][2]);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float vi = *at<const float>(r, 1, i, i1, i2, i3);
    int64_t rank = 0;
    for (int64_t j = 0; j < n; ++j) rank += before(*at<const float>(r, 1, j, i1, i2, i3), j, vi, i);
    if (rank < k) *at<int32_t>(r, 0, rank, i1, i2, i3) = static_cast<int32_t>(i);
  }
}

__global__ void expert_weights_kernel(const NodeRecord* rp) {
  const NodeRecord& r = *rp;
  const int64_t used = r.ne[2][0], tokens = r.ne[2][1];
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < tokens;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (int64_t j = 0; j < used; ++j) {
      const int32_t e = *at<const int32_t>(r, 2, j, t, 0, 0);
      // An id out of range reads nothing (the supports() side cannot check data): weight 0.
      const float v = e >= 0 && e < r.ne[1][0] ? *at<const float>(r, 1, e, t, 0, 0) : 0.0f;
      *at<float>(r, 0, j, t, 0, 0) = v;
      sum += v;
    }
    const float f = (r.ip[0] != 0 ? 1.0f / sum : 1.0f) * (r.fp[0] == 0 ? 1.f : r.fp[0]);
    for (int64_t j = 0; j < used; ++j) *at<float>(r, 0, j, t, 0, 0) *= f;
  }
}

__global__ void moe_combine_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  const int64_t d = r.ne[1][0], used = r.ne[1][1];
  for (int64_t flat = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; flat < n;
       flat += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = flat % d, t = flat / d;
    float acc = 0.f;
    for (int64_t j = 0; j < used; ++j) acc += *at<const float>(r, 1, i, j, t, 0) * *at<const float>(r, 2, j, t, 0, 0);
    *at<float>(r, 0, i, t, 0, 0) = acc;
  }
}

__global__ void concat_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  const int dim = r.ip[0];
  for (int64_t flat = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; flat < n;
       flat += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 x = unflatten(r, flat);
    int64_t i[4] = {x.i0, x.i1, x.i2, x.i3};
    const bool from_b = i[dim] >= r.ne[1][dim];
    if (from_b) i[dim] -= r.ne[1][dim];
    *at<float>(r, 0, x.i0, x.i1, x.i2, x.i3) = *at<const float>(r, from_b ? 2 : 1, i[0], i[1], i[2], i[3]);
  }
}

}  // namespace

int launch_rank(const NodeRecord* rec, const NodeRecord& host, int64_t k, Stream stream) {
  const int64_t n_rows = rows(host, 1);
  if (n_rows > 0x7fffffff) return static_cast<int>(cudaErrorInvalidConfiguration);
  rank_kernel<<<static_cast<unsigned>(n_rows), kBlock, 0, stream>>>(rec, k);
  return static_cast<int>(cudaGetLastError());
}

int launch_expert_weights(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  expert_weights_kernel<<<grid_for(host.ne[2][1], kBlock), kBlock, 0, stream>>>(rec);
  return static_cast<int>(cudaGetLastError());
}

int launch_moe_combine(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = host.ne[1][0] * host.ne[1][2];
  moe_combine_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_concat(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  concat_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
