// Data movement with conversion, as the CPU's reference: copy (f32 to f32 in flat element
// order between any layouts; f32 to and from f16, bf16, q8_0 and q4_0, the converted side
// dense), gather_cols (act-order GPTQ inputs) and fp8_qdq (a static FP8 activation scale:
// sdk/src/fp8.cpp's encoding, built from exact operations only, so the codes are the CPU's).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/common.cuh"
#include "kernels/dequant.cuh"
#include "kernels/launch.hpp"
#include "kernels/quantize.cuh"

namespace sy::cuda {
namespace {

constexpr int kBlock = 256;

__device__ Index4 unflatten_slot(const NodeRecord& r, int s, int64_t flat) {
  Index4 x;
  x.i0 = flat % r.ne[s][0];
  flat /= r.ne[s][0];
  x.i1 = flat % r.ne[s][1];
  flat /= r.ne[s][1];
  x.i2 = flat % r.ne[s][2];
  x.i3 = flat / r.ne[s][2];
  return x;
}

__device__ uint8_t* dense(const NodeRecord& r, int s) { return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(r.addr[s])); }

// One thread per element (plain targets) or per 32-element block (q8_0, q4_0 targets).
__global__ void copy_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  const uint32_t from = r.type[1], to = r.type[0];
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (from == ty::F32 && (to == ty::Q8_0 || to == ty::Q4_0)) {
      float x[32];
      for (int j = 0; j < 32; ++j) {
        const Index4 i = unflatten_slot(r, 1, e * 32 + j);
        x[j] = *at<const float>(r, 1, i.i0, i.i1, i.i2, i.i3);
      }
      if (to == ty::Q8_0)
        quantize_q8_0(x, dense(r, 0) + e * 34);
      else
        quantize_q4_0(x, dense(r, 0) + e * 18);
      continue;
    }
    float v;
    if (from == ty::F32) {
      const Index4 i = unflatten_slot(r, 1, e);
      v = *at<const float>(r, 1, i.i0, i.i1, i.i2, i.i3);
    } else {
      v = dequant(from, dense(r, 1), e);
    }
    if (to == ty::F32) {
      const Index4 o = unflatten_slot(r, 0, e);
      *at<float>(r, 0, o.i0, o.i1, o.i2, o.i3) = v;
    } else if (to == ty::F16) {
      put16(dense(r, 0) + 2 * e, __half_as_ushort(__float2half_rn(v)));
    } else {
      put16(dense(r, 0) + 2 * e, f32_to_bf16(v));
    }
  }
}

// dst[j, r...] = x[ids[j], r...].
__global__ void gather_cols_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 o = unflatten(r, e);
    const int32_t id = *at<const int32_t>(r, 2, o.i0, 0, 0, 0);
    const bool ok = id >= 0 && id < r.ne[1][0];
    *at<float>(r, 0, o.i0, o.i1, o.i2, o.i3) = ok ? *at<const float>(r, 1, id, o.i1, o.i2, o.i3) : __int_as_float(0x7fc00000);
  }
}

// Round to nearest even, saturating at 448 (the CPU's encoding). sm_89+ has it in hardware
// (cvt.rn.satfinite.e4m3x2.f32).
__device__ uint8_t e4m3_encode(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if (!isnan(x)) return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
#endif
  const uint8_t sign = signbit(x) ? 0x80 : 0x00;
  if (isnan(x)) return static_cast<uint8_t>(sign | 0x7f);
  const float a = fabsf(x);
  if (a >= 448.0f) return static_cast<uint8_t>(sign | 0x7e);
  int exp2 = 0;
  frexpf(a, &exp2);
  const int E = a < 0x1p-6f ? -6 : exp2 - 1;
  const float q = ldexpf(a, 3 - E);
  float n = floorf(q);
  const float frac = q - n;
  if (frac > 0.5f || (frac == 0.5f && fmodf(n, 2.0f) != 0.0f)) n += 1.0f;
  int mant = static_cast<int>(n);
  int e = a < 0x1p-6f ? 0 : E + 7;
  if (e == 0) return static_cast<uint8_t>(sign | mant);
  if (mant == 16) mant = 8, ++e;
  return static_cast<uint8_t>(sign | (e << 3) | (mant - 8));
}

// dst = qdq(x, s), s the largest element of the scale tensors (slots 2 .. n_src).
__global__ void fp8_qdq_kernel(const NodeRecord* rp, int64_t n) {
  const NodeRecord& r = *rp;
  float s = 0;
  for (uint32_t k = 2; k <= r.n_src; ++k) {
    const int64_t m = r.ne[k][0] * r.ne[k][1] * r.ne[k][2] * r.ne[k][3];
    for (int64_t i = 0; i < m; ++i) {
      const Index4 x = unflatten_slot(r, static_cast<int>(k), i);
      s = fmaxf(s, *at<const float>(r, static_cast<int>(k), x.i0, x.i1, x.i2, x.i3));
    }
  }
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Index4 o = unflatten(r, e);
    if (!(s > 0) || isinf(s)) {  // the CPU refuses such a scale: NaN marks the output as unusable
      *at<float>(r, 0, o.i0, o.i1, o.i2, o.i3) = __int_as_float(0x7fc00000);
      continue;
    }
    const float v = *at<const float>(r, 1, o.i0, o.i1, o.i2, o.i3) / s;
    const float c = isnan(v) ? v : fminf(fmaxf(v, -448.0f), 448.0f);
    *at<float>(r, 0, o.i0, o.i1, o.i2, o.i3) = fp8_e4m3(e4m3_encode(c)) * s;
  }
}

}  // namespace

int launch_copy(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const bool blocks = host.type[1] == ty::F32 && (host.type[0] == ty::Q8_0 || host.type[0] == ty::Q4_0);
  const int64_t n = elements(host, 1) / (blocks ? 32 : 1);
  copy_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_gather_cols(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  gather_cols_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

int launch_fp8_qdq(const NodeRecord* rec, const NodeRecord& host, Stream stream) {
  const int64_t n = elements(host, 0);
  fp8_qdq_kernel<<<grid_for(n, kBlock), kBlock, 0, stream>>>(rec, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace sy::cuda
