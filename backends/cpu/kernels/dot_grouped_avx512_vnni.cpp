// AVX-512 VNNI kernels of the grouped integer types (dot_grouped_avx512.hpp): vpdpbusd
// multiplies unsigned weight codes with signed activation levels and sums four products
// into int32 without intermediate saturation, so I8_G*'s codes 0..255 go in as stored and
// I4_G*'s nibbles need no offset: the zero point alone is taken back, through the sums.
#include "dot_grouped_avx512.hpp"

namespace sy::cpu {
namespace {

using grouped512::Consts;

struct Vnni {
  static constexpr float i8_offset = 0.0f;
  static __m512i i4(__m512i u, __m512i y, const Consts&) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y); }
  static __m512i i8_levels(__m512i v, const Consts&) { return v; }
  static __m512i i8(__m512i u, __m512i y, const Consts&) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, y); }
};

constexpr auto kEntries = grouped512::grouped_entries<Vnni>();

}  // namespace

constinit const KernelTable kAvx512VnniGrouped{kEntries};

}  // namespace sy::cpu
