// AVX-512 kernels of the grouped integer types (I4_G*, I8_G*) against act_q8_0_gsums'
// activations, shared by the plain AVX-512 file and the VNNI one: the only difference is
// the integer product (P below), so each file instantiates the templates with its own and
// its own compiler flags. Everything here has internal linkage, so the two instantiations
// never merge.
//
// The arithmetic is dot_grouped_scalar.cpp's: per activation block an exact int32 sum of
// level x level, then per group d * sum_b dx_b * p_b in f32, and the zero-point term
// d * (z - offset) * (group sum of dx_b * sum(y_b)) collected apart and subtracted at the
// end. 64 elements (two activation blocks) per 512-bit step; the planar activation layout
// lets the integer and float multiplies take their 64 levels and 16 scales straight from
// memory. I4_G128's 64 code bytes give
// the group's elements 0..63 as low nibbles and 64..127 as high ones, so one load and two
// masks unpack it; I4_G64's 32 bytes are broadcast to both halves and one half shifted;
// I4_G32 and I8_G32 take two groups per step.
//
// One kernel for one and for four activation rows (R): each row's arithmetic is the same
// whatever R is, so a token's result does not depend on the tokens batched with it.
#pragma once

#include <array>
#include <cstring>

#include "act_q8_sums.hpp"
#include "simd_avx512.hpp"

namespace sy::cpu {
namespace {
namespace grouped512 {

using avx512::u8;

inline uint64_t ld32(const u8* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline __m256i load256(const u8* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m128i load128(const u8* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline __m128 load_f32(const u8* p) { return _mm_load_ss(reinterpret_cast<const float*>(p)); }

struct Consts {
  __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512i k80 = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i ones16 = _mm512_set1_epi16(1);
  // Shift counts per 256-bit half (0, 4): I4_G64's 32 code bytes broadcast to both halves
  // give its low nibbles, then its high ones.
  __m512i half_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  // Shift counts per 128-bit lane (0, 4, 0, 4): two blocks of 16 code bytes (the G32 pair).
  __m512i lane_shift = _mm512_broadcast_i64x4(_mm256_set_m128i(_mm_set1_epi16(4), _mm_setzero_si128()));
  // Float lane permutation: element 0 to lanes 0..7 and element 1 to 8..15.
  __m512i idx01 = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
};

// P: the integer product of 64 weight levels with 64 activation levels, as 16 int32 sums
// of four consecutive products. i4 takes levels 0..15; i8 the codes 0..255 as stored,
// which P may recentre (then P::i8_offset says by how much: the zero point drops by it).

template <class P, int G, int Bits, int R>
void grouped_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  static_assert(G == 64 || G == 128, "G = 32 has its own kernel");
  constexpr int kBytes = 4 + G * Bits / 8;
  constexpr int kChunks = G / 64;
  const Consts c;
  const __m128 off = _mm_set_ss(Bits == 8 ? P::i8_offset : 0.0f);
  const size_t scales = q8g::scales_offset(n), gsum = q8g::group_sums_offset(n, G);
  // Two sets of accumulators, even and odd groups: one would chain every group on the
  // multiply-add latency (and a set chosen by a run-time index lives in memory).
  __m512 acc0[R], acc1[R], zv[R];
  __m128 zacc0[R], zacc1[R];
  for (int r = 0; r < R; ++r) {
    acc0[r] = acc1[r] = zv[r] = _mm512_setzero_ps();
    zacc0[r] = zacc1[r] = _mm_setzero_ps();
  }
  // One group's levels against each row, scaled by its d into acc.
  const auto body = [&](int64_t g, __m512 d, __m512* acc) {
    const u8* wg = wb + g * kBytes;
    for (int l = 0; l < kBytes; l += 64) avx512::prefetch_ahead(wg + l);
    __m512i u[kChunks];
    if constexpr (Bits == 4 && G == 128) {
      const __m512i v = _mm512_loadu_si512(wg + 4);
      u[0] = _mm512_and_si512(v, c.m4);
      u[1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), c.m4);
    } else if constexpr (Bits == 4) {
      const __m512i v = _mm512_broadcast_i64x4(load256(wg + 4));
      u[0] = _mm512_and_si512(_mm512_srlv_epi16(v, c.half_shift), c.m4);
    } else {
      for (int k = 0; k < kChunks; ++k) u[k] = P::i8_levels(_mm512_loadu_si512(wg + 4 + 64 * k), c);
    }
    for (int r = 0; r < R; ++r) {
      const u8* ar = ab + r * stride;
      __m512 gs = _mm512_setzero_ps();
      for (int k = 0; k < kChunks; ++k) {
        const size_t chunk = static_cast<size_t>(g) * kChunks + k;  // 64 elements
        const __m512i y = _mm512_loadu_si512(ar + 64 * chunk);
        const __m512 p = _mm512_cvtepi32_ps(Bits == 4 ? P::i4(u[k], y, c) : P::i8(u[k], y, c));
        const __m512 dx = _mm512_loadu_ps(reinterpret_cast<const float*>(ar + scales + 64 * chunk));
        gs = k == 0 ? _mm512_mul_ps(dx, p) : _mm512_fmadd_ps(dx, p, gs);
      }
      acc[r] = _mm512_fmadd_ps(d, gs, acc[r]);
    }
  };
  // A lone group: its d and z converted, the zero-point term in zacc.
  const auto group = [&](int64_t g, __m512* acc, __m128* zacc) {
    const __m128 dz = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(ld32(wb + g * kBytes))));  // d, z
    body(g, _mm512_broadcastss_ps(dz), acc);
    const __m128 zc = _mm_mul_ss(dz, _mm_sub_ss(_mm_movehdup_ps(dz), off));  // d * (z - offset)
    for (int r = 0; r < R; ++r) zacc[r] = _mm_fmadd_ss(zc, load_f32(ab + r * stride + gsum + 4 * g), zacc[r]);
  };
  const int64_t ng = n / G;
  int64_t g = 0;
  // 16 groups at a time: their d and z gathered and converted together, the zero-point
  // terms one multiply-add per row; per group, d is one broadcast from memory. (Per group,
  // the conversions were a third of the kernel's instructions.)
  const __m512i header = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32(kBytes));
  for (; g + 16 <= ng; g += 16) {
    const __m512i dz = _mm512_i32gather_epi32(header, wb + g * kBytes, 1);
    const __m512 d16 = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dz));
    const __m512 z16 = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dz, 16)));
    const __m512 zc16 = _mm512_mul_ps(d16, _mm512_sub_ps(z16, _mm512_set1_ps(_mm_cvtss_f32(off))));
    for (int r = 0; r < R; ++r)
      zv[r] = _mm512_fmadd_ps(zc16, _mm512_loadu_ps(reinterpret_cast<const float*>(ab + r * stride + gsum + 4 * g)), zv[r]);
    alignas(64) float d[16];
    _mm512_store_ps(d, d16);
    for (int j = 0; j < 16; j += 2) {
      body(g + j, _mm512_set1_ps(d[j]), acc0);
      body(g + j + 1, _mm512_set1_ps(d[j + 1]), acc1);
    }
  }
  for (; g + 2 <= ng; g += 2) {
    group(g, acc0, zacc0);
    group(g + 1, acc1, zacc1);
  }
  if (g < ng) group(g, acc0, zacc0);
  for (int r = 0; r < R; ++r) {
    const float z = _mm512_reduce_add_ps(zv[r]) + _mm_cvtss_f32(_mm_add_ss(zacc0[r], zacc1[r]));
    out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r])) - z;
  }
}

// G = 32: two groups per step, each with its own d and z; an odd last group pairs with
// itself against zero activations (and a zero scale, which the layout holds there).
template <class P, int Bits, int R>
void grouped32_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  constexpr int kBytes = 4 + 32 * Bits / 8;
  const Consts c;
  const __m128 off = _mm_set1_ps(Bits == 8 ? P::i8_offset : 0.0f);
  const size_t scales = q8g::scales_offset(n), gsum = q8g::group_sums_offset(n, 32);
  __m512 acc0[R], acc1[R], zv[R];
  __m128 zacc0[R], zacc1[R];
  for (int r = 0; r < R; ++r) {
    acc0[r] = acc1[r] = zv[r] = _mm512_setzero_ps();
    zacc0[r] = zacc1[r] = _mm_setzero_ps();
  }
  const int64_t ng = n / 32;
  // Groups g and g + 1 (or g alone, against zero activations) against each row, scaled by
  // d (d_g in lanes 0..7, d_g+1 in 8..15) into acc.
  const auto body = [&](int64_t g, bool pair, __m512 d, __m512* acc) {
    const u8* w0 = wb + g * kBytes;
    const u8* w1 = pair ? w0 + kBytes : w0;
    avx512::prefetch_ahead(w0);
    if constexpr (2 * kBytes > 64) avx512::prefetch_ahead(w0 + 64);
    __m512i u;
    if constexpr (Bits == 4) {
      const __m512i b = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load128(w0 + 4)), 0xff00, load128(w1 + 4));
      u = _mm512_and_si512(_mm512_srlv_epi16(b, c.lane_shift), c.m4);
    } else {
      u = P::i8_levels(avx512::join(load256(w0 + 4), load256(w1 + 4)), c);
    }
    for (int r = 0; r < R; ++r) {
      const u8* ar = ab + r * stride;
      const __m512i y = pair ? _mm512_loadu_si512(ar + 32 * g) : _mm512_zextsi256_si512(load256(ar + 32 * g));
      const __m512 p = _mm512_cvtepi32_ps(Bits == 4 ? P::i4(u, y, c) : P::i8(u, y, c));
      const __m512 dx = _mm512_loadu_ps(reinterpret_cast<const float*>(ar + scales + 32 * g));
      acc[r] = _mm512_fmadd_ps(d, _mm512_mul_ps(dx, p), acc[r]);
    }
  };
  // The same with the two groups' d and z converted here, the zero-point terms into zacc.
  const auto pair_of = [&](int64_t g, bool pair, __m512* acc, __m128* zacc) {
    const u8* w0 = wb + g * kBytes;
    const u8* w1 = pair ? w0 + kBytes : w0;
    // d0 d1 z0 z1
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(
        (ld32(w0) & 0xffff) | (ld32(w1) & 0xffff) << 16 | (ld32(w0) >> 16) << 32 | (ld32(w1) >> 16) << 48)));
    body(g, pair, _mm512_permutexvar_ps(c.idx01, _mm512_castps128_ps512(f)), acc);
    const __m128 zc = _mm_mul_ps(f, _mm_sub_ps(_mm_movehl_ps(f, f), off));  // d * (z - offset), lanes 0, 1
    for (int r = 0; r < R; ++r) {
      const u8* t = ab + r * stride + gsum + 4 * g;
      // Two floats (only when the pair exists) without a typed double load: the sums sit at
      // 4-byte alignment only.
      const __m128 sums = pair ? _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(t))) : load_f32(t);
      zacc[r] = _mm_fmadd_ps(zc, sums, zacc[r]);
    }
  };
  int64_t g = 0;
  // 16 groups at a time, their d and z gathered and converted together (grouped_rows).
  const __m512i header = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32(kBytes));
  const __m512i two = _mm512_set1_epi32(2);
  for (; g + 16 <= ng; g += 16) {
    const __m512i dz = _mm512_i32gather_epi32(header, wb + g * kBytes, 1);
    const __m512 d16 = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dz));
    const __m512 z16 = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dz, 16)));
    const __m512 zc16 = _mm512_mul_ps(d16, _mm512_sub_ps(z16, _mm512_set1_ps(_mm_cvtss_f32(off))));
    for (int r = 0; r < R; ++r)
      zv[r] = _mm512_fmadd_ps(zc16, _mm512_loadu_ps(reinterpret_cast<const float*>(ab + r * stride + gsum + 4 * g)), zv[r]);
    __m512i idx = c.idx01;  // lanes of d16 for groups j, j + 1: j x 8, j + 1 x 8
    for (int j = 0; j < 16; j += 4) {
      body(g + j, true, _mm512_permutexvar_ps(idx, d16), acc0);
      idx = _mm512_add_epi32(idx, two);
      body(g + j + 2, true, _mm512_permutexvar_ps(idx, d16), acc1);
      idx = _mm512_add_epi32(idx, two);
    }
  }
  for (; g + 4 <= ng; g += 4) {
    pair_of(g, true, acc0, zacc0);
    pair_of(g + 2, true, acc1, zacc1);
  }
  for (; g + 2 <= ng; g += 2) pair_of(g, true, acc0, zacc0);
  if (g < ng) pair_of(g, false, acc1, zacc1);
  for (int r = 0; r < R; ++r) {
    const __m128 zs = _mm_add_ps(zacc0[r], zacc1[r]);
    const float z = _mm512_reduce_add_ps(zv[r]) + _mm_cvtss_f32(_mm_add_ss(zs, _mm_movehdup_ps(zs)));
    out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r])) - z;
  }
}

template <class P, int G, int Bits>
float grouped_dot(int64_t n, const void* w, const void* a) {
  float out;
  if constexpr (G == 32)
    grouped32_rows<P, Bits, 1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  else
    grouped_rows<P, G, Bits, 1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  return out;
}
template <class P, int G, int Bits>
void grouped_dot4(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  if constexpr (G == 32)
    grouped32_rows<P, Bits, 4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
  else
    grouped_rows<P, G, Bits, 4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
}

/// The grouped integer types' entries with product P (the table of the unit that includes this).
template <class P, int G, int Bits>
constexpr KernelEntry grouped_entry(StorageType w) {
  return {w, {.act_type = StorageType::Q8_0, .dot = grouped_dot<P, G, Bits>, .quantize_act = act_q8_0_gsums,
              .isa = Isa::avx512, .dot4 = grouped_dot4<P, G, Bits>, .act_bytes = act_q8_0_gsums_bytes}};
}
/// The six grouped integer types' entries with product P.
template <class P>
constexpr std::array<KernelEntry, 6> grouped_entries() {
  using T = StorageType;
  return {grouped_entry<P, 32, 4>(T::I4_G32), grouped_entry<P, 64, 4>(T::I4_G64), grouped_entry<P, 128, 4>(T::I4_G128),
          grouped_entry<P, 32, 8>(T::I8_G32), grouped_entry<P, 64, 8>(T::I8_G64), grouped_entry<P, 128, 8>(T::I8_G128)};
}

}  // namespace grouped512
}  // namespace
}  // namespace sy::cpu
