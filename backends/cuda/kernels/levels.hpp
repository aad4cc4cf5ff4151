// The integer levels of a weight block, as the CPU's scalar dot products read them
// (backends/cpu/kernels/dot_scalar.cpp): a 32-element block of the legacy family gives 32
// levels, a scale d and an offset m; a 256-element K-quant super-block gives, per
// 32-element part, 32 levels and the two integer scales and mins of its 16-element groups.
// The q8 matmul path (matmul_q8.cu) multiplies them with q8 activation levels in integers,
// so its block sums are the CPU's exactly. Host and device code alike (blocks.hpp): the unit
// tests run these very functions against the CPU's reference on the host.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/blocks.hpp"
#include "kernels/types.hpp"

namespace sy::cuda {

/// Bytes per block of the legacy 32-element types, 0 for any other type.
SY_HD constexpr int legacy_block_bytes(uint32_t type) {
  switch (type) {
    case ty::Q4_0: return 18;
    case ty::Q4_1: return 20;
    case ty::Q5_0: return 22;
    case ty::Q5_1: return 24;
    case ty::Q8_0: return 34;
    case ty::IQ4_NL: return 18;
    default: return 0;
  }
}

/// Bytes per super-block of the K-quant types read with q8_K activations, 0 otherwise.
SY_HD constexpr int kquant_block_bytes(uint32_t type) {
  switch (type) {
    case ty::Q2_K: return 84;
    case ty::Q3_K: return 110;
    case ty::Q4_K: return 144;
    case ty::Q5_K: return 176;
    case ty::Q6_K: return 210;
    case ty::IQ4_XS: return 136;
    default: return 0;
  }
}

SY_HD inline uint32_t pack4(int a, int b, int c, int d) {
  return (static_cast<uint32_t>(a) & 0xffu) | ((static_cast<uint32_t>(b) & 0xffu) << 8) |
         ((static_cast<uint32_t>(c) & 0xffu) << 16) | ((static_cast<uint32_t>(d) & 0xffu) << 24);
}

/// Level j (0..31) of a legacy block.
template <uint32_t T>
SY_HD inline int legacy_level(const uint8_t* b, int j) {
  const int lo = j < 16;
  const int jj = j & 15;
  if constexpr (T == ty::Q8_0) {
    return static_cast<int8_t>(b[2 + j]);
  } else if constexpr (T == ty::Q4_0) {
    return (lo ? (b[2 + jj] & 0xf) : (b[2 + jj] >> 4)) - 8;
  } else if constexpr (T == ty::Q4_1) {
    return lo ? (b[4 + jj] & 0xf) : (b[4 + jj] >> 4);
  } else if constexpr (T == ty::Q5_0 || T == ty::Q5_1) {
    constexpr int qh_at = T == ty::Q5_0 ? 2 : 4, offset = T == ty::Q5_0 ? 16 : 0;
    const uint32_t qh = rd32(b + qh_at);
    const uint8_t q = b[qh_at + 4 + jj];
    return ((lo ? (q & 0xf) : (q >> 4)) | static_cast<int>(((qh >> j) & 1u) << 4)) - offset;
  } else {  // IQ4_NL
    return iq4_value(lo ? (b[2 + jj] & 0xf) : (b[2 + jj] >> 4));
  }
}

/// A legacy block's 32 levels packed four to a word (element 4i + k in byte k of word i),
/// its scale d and offset m (0 for the symmetric types).
template <uint32_t T>
SY_HD inline void legacy_block(const uint8_t* b, uint32_t w[8], float& d, float& m) {
  d = h2f(b);
  m = (T == ty::Q4_1 || T == ty::Q5_1) ? h2f(b + 2) : 0.0f;
  for (int i = 0; i < 8; ++i)
    w[i] = pack4(legacy_level<T>(b, 4 * i), legacy_level<T>(b, 4 * i + 1), legacy_level<T>(b, 4 * i + 2),
                 legacy_level<T>(b, 4 * i + 3));
}

/// Part s (0..7, elements 32s..32s+31) of a K-quant super-block.
struct KPart {
  uint32_t w[8];      ///< the 32 levels, packed as legacy_block's
  int sc[2], mn[2];   ///< integer scale and min of each 16-element group
  float d, dmin;
};

template <uint32_t T>
SY_HD inline int kquant_level(const uint8_t* b, int s, int l) {
  const int h = s >> 2, ss = s & 3;
  if constexpr (T == ty::Q2_K) {
    return (b[16 + h * 32 + l] >> (2 * ss)) & 3;
  } else if constexpr (T == ty::Q3_K) {
    const int lo = (b[32 + h * 32 + l] >> (2 * ss)) & 3;
    const int hi = (b[l] >> (h * 4 + ss)) & 1;
    return lo - (hi ? 0 : 4);
  } else if constexpr (T == ty::Q4_K || T == ty::Q5_K) {
    const int p = s >> 1, half = s & 1;
    const uint8_t q = b[(T == ty::Q5_K ? 48 : 16) + 32 * p + l];
    int v = half ? (q >> 4) : (q & 0xf);
    if constexpr (T == ty::Q5_K) v += ((b[16 + l] >> (2 * p + half)) & 1) << 4;
    return v;
  } else if constexpr (T == ty::Q6_K) {
    const uint8_t* ql = b + h * 64;
    const int qh = b[128 + h * 32 + l];
    const int q = (ss & 1) ? ql[l + 32] : ql[l];
    return ((ss < 2 ? (q & 0xf) : (q >> 4)) | (((qh >> (2 * ss)) & 3) << 4)) - 32;
  } else {  // IQ4_XS
    const uint8_t* qs = b + 8 + 16 * s;
    return iq4_value(l < 16 ? (qs[l] & 0xf) : (qs[l - 16] >> 4));
  }
}

template <uint32_t T>
SY_HD inline void kquant_part(const uint8_t* b, int s, KPart& k) {
  for (int i = 0; i < 8; ++i)
    k.w[i] = pack4(kquant_level<T>(b, s, 4 * i), kquant_level<T>(b, s, 4 * i + 1), kquant_level<T>(b, s, 4 * i + 2),
                   kquant_level<T>(b, s, 4 * i + 3));
  k.mn[0] = k.mn[1] = 0;
  k.dmin = 0;
  if constexpr (T == ty::Q2_K) {
    k.d = h2f(b + 80);
    k.dmin = h2f(b + 82);
    for (int g = 0; g < 2; ++g) {
      k.sc[g] = b[2 * s + g] & 0xf;
      k.mn[g] = b[2 * s + g] >> 4;
    }
  } else if constexpr (T == ty::Q3_K) {
    k.d = h2f(b + 108);
    const uint8_t* p = b + 96;
    for (int gi = 0; gi < 2; ++gi) {
      const int g = 2 * s + gi;
      const int low = g < 8 ? (p[g] & 0xf) : (p[g - 8] >> 4);
      k.sc[gi] = (low | (((p[8 + (g % 4)] >> (2 * (g / 4))) & 3) << 4)) - 32;
    }
  } else if constexpr (T == ty::Q4_K || T == ty::Q5_K) {
    k.d = h2f(b);
    k.dmin = h2f(b + 2);
    int sc, m;
    scale_min_k4(s, b + 4, sc, m);
    k.sc[0] = k.sc[1] = sc;
    k.mn[0] = k.mn[1] = m;
  } else if constexpr (T == ty::Q6_K) {
    k.d = h2f(b + 208);
    k.sc[0] = static_cast<int8_t>(b[192 + 2 * s]);
    k.sc[1] = static_cast<int8_t>(b[192 + 2 * s + 1]);
  } else {  // IQ4_XS
    k.d = h2f(b);
    const int sh = b[2] | (b[3] << 8);
    const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 0xf) | (((sh >> (2 * s)) & 3) << 4);
    k.sc[0] = k.sc[1] = ls - 32;
  }
}

// Activation blocks, as the kernels keep them in scratch (4-byte aligned).
struct Act32 {  ///< q8_0: the f16-rounded scale as a float, the sum of the levels, 32 levels
  float d;
  int qsum;
  int q[8];
};
struct ActK {  ///< q8_K: f32 scale, the sum of each 16 levels, 256 levels
  float d;
  int bsum[16];
  int q[64];
};

/// Four signed byte products added to c (dp4a).
SY_HD inline int dot4(uint32_t a, uint32_t b, int c) {
#ifdef __CUDA_ARCH__
  return __dp4a(static_cast<int>(a), static_cast<int>(b), c);
#else
  for (int i = 0; i < 4; ++i)
    c += static_cast<int8_t>(static_cast<uint8_t>(a >> (8 * i))) * static_cast<int8_t>(static_cast<uint8_t>(b >> (8 * i)));
  return c;
#endif
}

/// The CPU's act_q8_0 level of v for the inverse scale id: half away from zero, saturated,
/// NaN as 0.
SY_HD inline int q8_0_level(float v, float id) {
  const float t = roundf(v * id);
  if (t >= 127.f) return 127;
  if (t <= -128.f) return -128;
  return t == t ? static_cast<int>(t) : 0;
}

/// The SDK's q8_K level of v for iscale = -127 / (the first element of largest magnitude):
/// to nearest even, at most 127. A block so small that iscale overflows has scale 1/iscale = 0;
/// its levels are 0 (the CPU's int8 of lrintf(inf) on x86), so they add nothing to the sums.
SY_HD inline int q8_k_level(float v, float iscale) {
  const float t = iscale * v;
  if (!(t - t == 0.0f)) return 0;  // inf or NaN
#ifdef __CUDA_ARCH__
  const int q = __float2int_rn(t);
#else
  const int q = static_cast<int>(lrintf(t));
#endif
  return q < 127 ? q : 127;
}

/// A legacy block's term of the row's dot product: the CPU's `d * da * sum + m * da * qsum`.
template <uint32_t T>
SY_HD inline float legacy_dot(const uint8_t* w, const Act32& a) {
  uint32_t lv[8];
  float d, m;
  legacy_block<T>(w, lv, d, m);
  int sum = 0;
  for (int i = 0; i < 8; ++i) sum = dot4(lv[i], static_cast<uint32_t>(a.q[i]), sum);
  return d * a.d * static_cast<float>(sum) + m * a.d * static_cast<float>(a.qsum);
}

/// Part s of a K-quant super-block's term: `d * da * sum - dmin * da * msum` over its two
/// 16-element groups (the CPU sums all 16 groups in integers first: the same value whenever
/// no part's float rounds, and within a rounding step otherwise).
template <uint32_t T>
SY_HD inline float kquant_dot(const uint8_t* w, int s, const ActK& a) {
  KPart k;
  kquant_part<T>(w, s, k);
  int g0 = 0, g1 = 0;
  for (int i = 0; i < 4; ++i) g0 = dot4(k.w[i], static_cast<uint32_t>(a.q[8 * s + i]), g0);
  for (int i = 4; i < 8; ++i) g1 = dot4(k.w[i], static_cast<uint32_t>(a.q[8 * s + i]), g1);
  const int sum = k.sc[0] * g0 + k.sc[1] * g1;
  const int msum = k.mn[0] * a.bsum[2 * s] + k.mn[1] * a.bsum[2 * s + 1];
  return k.d * a.d * static_cast<float>(sum) - k.dmin * a.d * static_cast<float>(msum);
}

}  // namespace sy::cuda
