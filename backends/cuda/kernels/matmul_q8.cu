// The q8 path of matmul and matmul_id: the activations are first quantized into the node's
// scratch as the CPU quantizes them (q8_0 blocks for the legacy 32-element types, q8_K
// super-blocks for the K-quants, with the CPU's recipes, rounding and tie rules), then each
// output is a sum over weight blocks of integer dot products (dp4a, four levels per
// instruction) scaled per block with the CPU's float expression. Each block's integer sum is
// therefore the CPU scalar reference's exactly; only the order the per-block floats are added
// in differs (lanes stride the blocks, then a shuffle sum), as on the CPU's SIMD paths.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/launch.hpp"
#include "kernels/levels.hpp"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256, kWarps = kBlock / 32;
constexpr unsigned kAll = 0xffffffffu;

static_assert(sizeof(Act32) == kAct32Bytes && sizeof(ActK) == kActKBytes, "launch.hpp's sizes");

__device__ const uint8_t* bytes(uint64_t addr) { return reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(addr)); }

// Column c of the activations (slot 2), flattened over ne1 x ne2 x ne3.
__device__ const float* column(const NodeRecord& r, int64_t c) {
  const int64_t c1 = c % r.ne[2][1], c2 = (c / r.ne[2][1]) % r.ne[2][2], c3 = c / (r.ne[2][1] * r.ne[2][2]);
  return at<const float>(r, 2, 0, c1, c2, c3);
}

// One warp per (column, 32-block); lane j quantizes element j.
__global__ void quantize_q8_0_kernel(const NodeRecord* rp, int64_t items) {
  const NodeRecord& r = *rp;
  const int64_t nb = r.ne[2][0] / 32;
  const int lane = threadIdx.x & 31;
  auto* act = reinterpret_cast<Act32*>(static_cast<uintptr_t>(r.scratch));
  for (int64_t it = (blockIdx.x * static_cast<int64_t>(kWarps)) + (threadIdx.x >> 5); it < items;
       it += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t c = it / nb, b = it % nb;
    const float v = column(r, c)[b * 32 + lane];
    float a = fabsf(v);
    if (a != a) a = 0;  // std::max(amax, NaN) keeps amax
    const float amax = __uint_as_float(__reduce_max_sync(kAll, __float_as_uint(a)));
    const float d = amax / 127.f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const int q = q8_0_level(v, id);
    const int qsum = __reduce_add_sync(kAll, q);
    Act32& out = act[it];
    reinterpret_cast<int8_t*>(out.q)[lane] = static_cast<int8_t>(q);
    if (lane == 0) {
      out.d = __half2float(__float2half_rn(d));
      out.qsum = qsum;
    }
  }
}

// One warp per (column, 256-block); lane l quantizes elements 8l..8l+7 (half a 16-group):
// the SDK's q8_K recipe, whose scale comes from the first element of largest magnitude.
__global__ void quantize_q8_k_kernel(const NodeRecord* rp, int64_t items) {
  const NodeRecord& r = *rp;
  const int64_t nb = r.ne[2][0] / 256;
  const int lane = threadIdx.x & 31;
  auto* act = reinterpret_cast<ActK*>(static_cast<uintptr_t>(r.scratch));
  for (int64_t it = (blockIdx.x * static_cast<int64_t>(kWarps)) + (threadIdx.x >> 5); it < items;
       it += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t c = it / nb, b = it % nb;
    const float* x = column(r, c) + b * 256;
    float v[8], amax_l = 0;
    unsigned first = 0xffffffffu;
    for (int e = 0; e < 8; ++e) {
      v[e] = x[8 * lane + e];
      if (fabsf(v[e]) > amax_l) {  // NaN never compares greater, as on the CPU
        amax_l = fabsf(v[e]);
        first = static_cast<unsigned>(8 * lane + e);
      }
    }
    const float amax = __uint_as_float(__reduce_max_sync(kAll, __float_as_uint(amax_l)));
    const unsigned at_max = __reduce_min_sync(kAll, amax_l == amax ? first : 0xffffffffu);
    ActK& out = act[it];
    int sum = 0;
    float d = 0;
    if (amax > 0) {
      const float iscale = -127.f / x[at_max];
      for (int e = 0; e < 8; ++e) {
        const int q = q8_k_level(v[e], iscale);
        reinterpret_cast<int8_t*>(out.q)[8 * lane + e] = static_cast<int8_t>(q);
        sum += q;
      }
      d = 1 / iscale;
    } else {
      for (int e = 0; e < 8; ++e) reinterpret_cast<int8_t*>(out.q)[8 * lane + e] = 0;
    }
    sum += __shfl_xor_sync(kAll, sum, 1);  // the other half of this lane's 16-group
    if ((lane & 1) == 0) out.bsum[lane / 2] = sum;
    if (lane == 0) out.d = d;
  }
}

// Weight row `w` against activation column `col` (its blocks in scratch), summed by the warp.
template <uint32_t T>
__device__ float row_dot(const NodeRecord& r, const uint8_t* w, int64_t col, int lane) {
  const int64_t k = r.ne[1][0];
  float acc = 0;
  if constexpr (legacy_block_bytes(T) != 0) {
    const int64_t nb = k / 32;
    const auto* act = reinterpret_cast<const Act32*>(static_cast<uintptr_t>(r.scratch)) + col * nb;
    for (int64_t b = lane; b < nb; b += 32) acc += legacy_dot<T>(w + b * legacy_block_bytes(T), act[b]);
  } else {
    const int64_t nb = k / 256;
    const auto* act = reinterpret_cast<const ActK*>(static_cast<uintptr_t>(r.scratch)) + col * nb;
    for (int64_t p = lane; p < nb * 8; p += 32)
      acc += kquant_dot<T>(w + (p / 8) * kquant_block_bytes(T), static_cast<int>(p % 8), act[p / 8]);
  }
  return warp_sum(acc);
}

template <uint32_t T>
__global__ void matmul_q8_kernel(const NodeRecord* rp, int64_t outputs) {
  const NodeRecord& r = *rp;
  const int64_t rows = r.ne[1][1];
  const int lane = threadIdx.x & 31;
  for (int64_t o = (blockIdx.x * static_cast<int64_t>(kWarps)) + (threadIdx.x >> 5); o < outputs;
       o += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t row = o % rows, col = o / rows;
    const float acc = row_dot<T>(r, bytes(r.addr[1] + row * r.nb[1][1]), col, lane);
    if (lane == 0) {
      const int64_t c1 = col % r.ne[2][1], c2 = (col / r.ne[2][1]) % r.ne[2][2], c3 = col / (r.ne[2][1] * r.ne[2][2]);
      *at<float>(r, 0, row, c1, c2, c3) = acc;
    }
  }
}

template <uint32_t T>
__global__ void matmul_id_q8_kernel(const NodeRecord* rp, int64_t outputs) {
  const NodeRecord& r = *rp;
  const int64_t rows = r.ne[1][1], experts = r.ne[1][2], used = r.ne[3][0];
  const int lane = threadIdx.x & 31;
  for (int64_t o = (blockIdx.x * static_cast<int64_t>(kWarps)) + (threadIdx.x >> 5); o < outputs;
       o += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t row = o % rows, pair = o / rows, j = pair % used, t = pair / used;
    const int32_t e = *at<const int32_t>(r, 3, j, t, 0, 0);
    float acc = 0;
    if (e >= 0 && e < experts) {  // an id out of range gives 0, as on the portable path
      const int64_t col = (r.ne[2][1] == 1 ? 0 : j) + r.ne[2][1] * t;
      acc = row_dot<T>(r, bytes(r.addr[1] + row * r.nb[1][1] + e * r.nb[1][2]), col, lane);
    }
    if (lane == 0) *at<float>(r, 0, row, j, t, 0) = acc;
  }
}

int quantize(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const bool legacy = legacy_block_bytes(host.type[1]) != 0;
  const int64_t items = rows(host, 2) * (host.ne[2][0] / (legacy ? 32 : 256));
  if (legacy)
    quantize_q8_0_kernel<<<grid_for(items, kWarps), kBlock, 0, stream>>>(rec, items);
  else
    quantize_q8_k_kernel<<<grid_for(items, kWarps), kBlock, 0, stream>>>(rec, items);
  return static_cast<int>(cudaGetLastError());
}

template <template <uint32_t> class Launch>
int by_type(uint32_t type, const NodeRecord* rec, int64_t outputs, Stream stream) {
  switch (type) {
#define SY_Q8_CASE(T) \
  case ty::T: Launch<ty::T>::run(rec, outputs, stream); break;
    SY_Q8_CASE(Q4_0) SY_Q8_CASE(Q4_1) SY_Q8_CASE(Q5_0) SY_Q8_CASE(Q5_1) SY_Q8_CASE(Q8_0) SY_Q8_CASE(IQ4_NL)
    SY_Q8_CASE(Q2_K) SY_Q8_CASE(Q3_K) SY_Q8_CASE(Q4_K) SY_Q8_CASE(Q5_K) SY_Q8_CASE(Q6_K) SY_Q8_CASE(IQ4_XS)
#undef SY_Q8_CASE
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

template <uint32_t T>
struct MatmulLaunch {
  static void run(const NodeRecord* rec, int64_t outputs, Stream stream) {
    matmul_q8_kernel<T><<<grid_for(outputs, kWarps), kBlock, 0, stream>>>(rec, outputs);
  }
};
template <uint32_t T>
struct MatmulIdLaunch {
  static void run(const NodeRecord* rec, int64_t outputs, Stream stream) {
    matmul_id_q8_kernel<T><<<grid_for(outputs, kWarps), kBlock, 0, stream>>>(rec, outputs);
  }
};

}  // namespace

bool q8_weight_type(uint32_t type) { return legacy_block_bytes(type) != 0 || kquant_block_bytes(type) != 0; }

size_t q8_scratch_bytes(const NodeRecord& host) {
  const bool legacy = legacy_block_bytes(host.type[1]) != 0;
  const auto blocks = static_cast<size_t>(rows(host, 2) * (host.ne[2][0] / (legacy ? 32 : 256)));
  return blocks * (legacy ? sizeof(Act32) : sizeof(ActK));
}

int launch_matmul_q8(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  if (int e = quantize(rec, host, stream)) return e;
  return by_type<MatmulLaunch>(host.type[1], rec, host.ne[1][1] * rows(host, 2), stream);
}

int launch_matmul_id_q8(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  if (int e = quantize(rec, host, stream)) return e;
  return by_type<MatmulIdLaunch>(host.type[1], rec, host.ne[1][1] * host.ne[3][0] * host.ne[3][1], stream);
}

}  // namespace sy::cuda
