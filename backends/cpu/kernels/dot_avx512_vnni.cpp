// AVX-512 VNNI kernels for the 32-element block types against Q8_0 activations (vpdpbusd:
// u8 x s8 products summed into int32 with no intermediate saturation, so every sum is the
// scalar reference's exact integer). Signed weight levels are made unsigned with an offset
// o (level + o in 0..255) and the offset is taken back as o * sum(y); both terms come from
// vpdpbusd. Two blocks per 512-bit step: bytes 0..31 block 0, 32..63 block 1.
//
// Where the time went before: per pair of blocks, four scalar f16 conversions and their
// broadcasts (shuffle-port work) cost more than the integer dot itself. Here the four
// half-precision scales are packed in a general register, converted in one instruction
// and spread over the lanes with one permute; nibbles are loaded with broadcasts (load
// ports) and split with a variable shift instead of inserts.
#include <cstring>

#include "dot_avx512_vnni_common.hpp"

namespace sy::cpu {
namespace {

using namespace avx512;
using namespace avx512_vnni;

// Levels of two blocks as unsigned bytes, in the activations' element order.
struct Q4_0L {  // nibble - 8
  static constexpr int bytes = 18, offset = 8;
  static __m512i levels(const u8* b0, const u8* b1, const Consts& c) { return nibbles2(b0 + 2, b1 + 2, c); }
};
struct Q8_0L {  // int8 + 128
  static constexpr int bytes = 34, offset = 128;
  static __m512i levels(const u8* b0, const u8* b1, const Consts& c) {
    return _mm512_xor_si512(join(load256(b0 + 2), load256(b1 + 2)), c.k80);
  }
};
struct Q5_0L {  // (nibble | high bit << 4) - 16
  static constexpr int bytes = 22, offset = 16;
  static __m512i levels(const u8* b0, const u8* b1, const Consts& c) {
    return high_bits(nibbles2(b0 + 6, b1 + 6, c), b0 + 2, b1 + 2, c);
  }
};
struct IQ4_NLL {  // table value + 128
  static constexpr int bytes = 18, offset = 128;
  static __m512i levels(const u8* b0, const u8* b1, const Consts& c) {
    return _mm512_shuffle_epi8(c.iq4_u, nibbles2(b0 + 2, b1 + 2, c));
  }
};
// Affine types: d * sum(u y) + m * sum(y), u unsigned.
struct Q4_1L {
  static constexpr int bytes = 20;
  static __m512i levels(const u8* b0, const u8* b1, const Consts& c) { return nibbles2(b0 + 4, b1 + 4, c); }
};
struct Q5_1L {
  static constexpr int bytes = 24;
  static __m512i levels(const u8* b0, const u8* b1, const Consts& c) {
    return high_bits(nibbles2(b0 + 8, b1 + 8, c), b0 + 4, b1 + 4, c);
  }
};

// One kernel for one and for four activation rows (R): each row's arithmetic is the same
// whatever R is, so the prefill (4-row) results equal the decode (1-row) ones bit for bit
// and a token's logits do not depend on the tokens batched with it. The 4-row form unpacks
// each block pair's levels once for all rows.
template <class L, int R>
void sym32_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  const Consts c;
  const __m512i off = _mm512_set1_epi8(static_cast<char>(L::offset));
  __m512 acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  const int64_t nb = n / 32;
  // Blocks i and i + 1 into acc.
  auto pair = [&](int64_t i, __m512* acc) {
    const u8* w0 = wb + i * L::bytes;
    prefetch_ahead(w0);
    if constexpr (2 * L::bytes > 64) prefetch_ahead(w0 + 64);
    const __m512i u = L::levels(w0, w0 + L::bytes, c);
    for (int r = 0; r < R; ++r) {
      const u8* a0 = ab + r * stride + i * 34;
      const __m512i y = join(load256(a0 + 2), load256(a0 + 36));
      const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y),
                                         _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, y));
      acc[r] = _mm512_fmadd_ps(scales2(w0, w0 + L::bytes, a0, a0 + 34, c), _mm512_cvtepi32_ps(p), acc[r]);
    }
  };
  int64_t i = 0;
  // Two independent accumulators: one would chain every step on the FMA latency.
  for (; i + 4 <= nb; i += 4) {
    pair(i, acc0);
    pair(i + 2, acc1);
  }
  for (; i + 2 <= nb; i += 2) pair(i, acc0);
  // An odd last block pairs with itself against zero activations.
  if (i < nb) {
    const u8* w0 = wb + i * L::bytes;
    const __m512i u = L::levels(w0, w0, c);
    for (int r = 0; r < R; ++r) {
      const u8* a0 = ab + r * stride + i * 34;
      const __m512i y = join(load256(a0 + 2), _mm256_setzero_si256());
      const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y),
                                         _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, y));
      acc1[r] = _mm512_fmadd_ps(_mm512_set1_ps(f16(w0) * f16(a0)), _mm512_cvtepi32_ps(p), acc1[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
}

// The affine types, with the same one-kernel-for-both-row-counts rule: d terms in acc0,
// m terms in acc1.
template <class L, int R>
void affine32_rows(int64_t n, const u8* wb, const u8* ab, size_t stride, float* out) {
  const Consts c;
  const __m512i ones = _mm512_set1_epi8(1);
  __m512 acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  const int64_t nb = n / 32;
  int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    const u8* w0 = wb + i * L::bytes;
    prefetch_ahead(w0);
    const __m512i u = L::levels(w0, w0 + L::bytes, c);
    for (int r = 0; r < R; ++r) {
      const u8* a0 = ab + r * stride + i * 34;
      const __m512i y = join(load256(a0 + 2), load256(a0 + 36));
      const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y);
      const __m512i ys = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, y);
      __m512 d, m;
      scales2_affine(w0, w0 + L::bytes, a0, a0 + 34, c, d, m);
      acc0[r] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc0[r]);
      acc1[r] = _mm512_fmadd_ps(m, _mm512_cvtepi32_ps(ys), acc1[r]);
    }
  }
  if (i < nb) {
    const u8* w0 = wb + i * L::bytes;
    const __m512i u = L::levels(w0, w0, c);
    for (int r = 0; r < R; ++r) {
      const u8* a0 = ab + r * stride + i * 34;
      const __m512i y = join(load256(a0 + 2), _mm256_setzero_si256());
      const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y);
      const __m512i ys = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, y);
      const float da = f16(a0);
      acc0[r] = _mm512_fmadd_ps(_mm512_set1_ps(f16(w0) * da), _mm512_cvtepi32_ps(p), acc0[r]);
      acc1[r] = _mm512_fmadd_ps(_mm512_set1_ps(f16(w0 + 2) * da), _mm512_cvtepi32_ps(ys), acc1[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
}

template <class L>
float sym32(int64_t n, const void* w, const void* a) {
  float out;
  sym32_rows<L, 1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  return out;
}
template <class L>
void dot4_sym32(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  sym32_rows<L, 4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
}
template <class L>
float affine32(int64_t n, const void* w, const void* a) {
  float out;
  affine32_rows<L, 1>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), 0, &out);
  return out;
}
template <class L>
void dot4_affine32(int64_t n, const void* w, const void* a, size_t stride, float out[4]) {
  affine32_rows<L, 4>(n, static_cast<const u8*>(w), static_cast<const u8*>(a), stride, out);
}

template <class L>
constexpr KernelEntry sym(StorageType w) { return {w, {StorageType::Q8_0, sym32<L>, act_q8_0, Isa::avx512, dot4_sym32<L>}}; }
template <class L>
constexpr KernelEntry affine(StorageType w) {
  return {w, {StorageType::Q8_0, affine32<L>, act_q8_0, Isa::avx512, dot4_affine32<L>}};
}

// The K-quants are dot_avx512_vnni_k.cpp's, the grouped types dot_grouped_avx512_vnni.cpp's.
constexpr KernelEntry kEntries[] = {
    sym<Q4_0L>(StorageType::Q4_0),     sym<Q8_0L>(StorageType::Q8_0),       sym<Q5_0L>(StorageType::Q5_0),
    sym<IQ4_NLL>(StorageType::IQ4_NL), affine<Q4_1L>(StorageType::Q4_1), affine<Q5_1L>(StorageType::Q5_1),
};

}  // namespace

constinit const KernelTable kAvx512Vnni{kEntries};

}  // namespace sy::cpu
