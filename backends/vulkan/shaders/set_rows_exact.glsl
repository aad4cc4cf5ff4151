// Exact arithmetic for the cache writers, so a row quantized here has the bytes the SDK's
// quantize_row (sdk/src/quantize_scale.cpp, fp16.cpp) gives it on the CPU. Vulkan leaves
// three things loose that the SDK's quantizer depends on: the rounding of packHalf2x16,
// the accuracy of float division (2.5 ulp), and doubles (shaderFloat64 is optional). So
// f16 rounding and division are done in integers, and the few doubles of the scale
// search are a software double (sign, 53-bit significand, exponent) on int64.
// Float +, - and * are correctly rounded in Vulkan; callers mark them `precise` so no
// fused multiply-add changes them. Subnormal floats may be flushed by the device: rows
// holding values below 2^-126 are not guaranteed to match.

// f32 -> f16 bits, nearest even (sdk fp16.cpp's fp32_to_fp16, done the same way).
uint f16_bits(float f) {
  const uint u = floatBitsToUint(f);
  const uint sign = (u >> 16) & 0x8000u;
  const uint a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return sign;
    const uint sh = 126u - (a >> 23);
    const uint m = (a & 0x7fffffu) | 0x800000u;
    uint r = m >> sh;
    const uint rem = m & ((1u << sh) - 1u), mid = 1u << (sh - 1u);
    if (rem > mid || (rem == mid && (r & 1u) != 0u)) ++r;
    return sign | r;
  }
  uint h = (a - 0x38000000u) >> 13;
  const uint rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ++h;
  return sign | h;
}

// f16 bits -> f32, exact (no reliance on the device keeping f16 subnormals).
float f16_value(uint h) {
  const uint sign = (h & 0x8000u) << 16;
  const uint e = (h >> 10) & 0x1fu;
  uint m = h & 0x3ffu;
  if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  if (e != 0u) return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0u) return uintBitsToFloat(sign);
  uint k = 0u;
  do {
    ++k;
    m <<= 1;
  } while ((m & 0x400u) == 0u);
  return uintBitsToFloat(sign | ((113u - k) << 23) | ((m & 0x3ffu) << 13));
}

float f16_round(float f) { return f16_value(f16_bits(f)); }

int msb64(uint64_t m) {
  const uint hi = uint(m >> 32);
  return hi != 0u ? 32 + findMSB(hi) : findMSB(uint(m));
}

// The float nearest (ties to even) to (m + s) * 2^e, where s in [0, 1) is nonzero exactly
// when `sticky`; m must carry at least 26 significant bits when sticky is set.
float round_to_float(uint sign, uint64_t m, int e, bool sticky) {
  if (m == 0ul) return uintBitsToFloat(sign);
  const int len = msb64(m) + 1;
  int be = e + len + 126;  // biased exponent of a normal result
  int shift = len - 24;
  if (be < 1) shift += 1 - be;  // subnormal: fewer bits kept
  uint64_t keep;
  if (shift > 63) {
    keep = 0ul;
  } else if (shift > 0) {
    keep = m >> shift;
    const uint64_t rem = m & ((1ul << shift) - 1ul), mid = 1ul << (shift - 1);
    if (rem > mid || (rem == mid && (sticky || (keep & 1ul) != 0ul))) ++keep;
  } else {
    keep = m << (-shift);
  }
  if (be < 1) return uintBitsToFloat(sign | uint(keep));  // a carry to 2^23 is the smallest normal
  if (keep == (1ul << 24)) {
    keep >>= 1;
    ++be;
  }
  if (be >= 255) return uintBitsToFloat(sign | 0x7f800000u);
  return uintBitsToFloat(sign | (uint(be) << 23) | (uint(keep) & 0x7fffffu));
}

// A finite float as m * 2^e (m < 2^24, zero for zero).
void split_float(float f, out uint64_t m, out int e) {
  const uint u = floatBitsToUint(f) & 0x7fffffffu;
  const uint be = u >> 23;
  m = uint64_t(u & 0x7fffffu);
  if (be != 0u) m |= 0x800000ul;
  e = int(max(be, 1u)) - 150;
}

// a / b rounded to nearest even, for finite a and nonzero finite b.
float div_rn(float a, float b) {
  const uint sign = (floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u;
  uint64_t ma, mb;
  int ea, eb;
  split_float(a, ma, ea);
  split_float(b, mb, eb);
  if (mb == 0ul) return a / b;  // not reached by the callers, which never divide by zero
  if (ma == 0ul) return uintBitsToFloat(sign);
  // Normalise both to 24 bits so the quotient has 40 or 41 bits.
  const int la = msb64(ma), lb = msb64(mb);
  ma <<= (23 - la);
  ea -= 23 - la;
  mb <<= (23 - lb);
  eb -= 23 - lb;
  const uint64_t n = ma << 40;
  const uint64_t q = n / mb;
  return round_to_float(sign, q, ea - eb - 40, n - q * mb != 0ul);
}

// a / b for any floats (the CPU's C++ division): exact for finite ones, the IEEE results
// for the zero and infinite cases a damaged activation can bring.
float div_any(float a, float b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (isinf(a) || isinf(b) || b == 0.0 || a == 0.0) {
    const uint sign = (floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u;
    const bool inf = isinf(a) ? !isinf(b) : b == 0.0;
    if (isinf(a) && isinf(b) || a == 0.0 && b == 0.0) return uintBitsToFloat(0x7fc00000u);
    return uintBitsToFloat(sign | (inf ? 0x7f800000u : 0u));
  }
  return div_rn(a, b);
}

// The software double: value = (neg ? -1 : 1) * m * 2^e, m in [2^52, 2^53) or m == 0.
struct Dbl {
  uint64_t m;
  int e;
  bool neg;
};

Dbl dbl_zero() { return Dbl(0ul, 0, false); }

// Rounds (m + s) * 2^e (s as in round_to_float) to 53 bits, nearest even. The scale
// search's doubles never leave the normal range, so no subnormal or overflow case.
Dbl dbl_round(bool neg, uint64_t m, int e, bool sticky) {
  if (m == 0ul) return Dbl(0ul, 0, false);
  const int shift = msb64(m) + 1 - 53;
  if (shift <= 0) return Dbl(m << (-shift), e + shift, neg);
  uint64_t keep = m >> shift;
  const uint64_t rem = m & ((1ul << shift) - 1ul), mid = 1ul << (shift - 1);
  if (rem > mid || (rem == mid && (sticky || (keep & 1ul) != 0ul))) ++keep;
  int ke = e + shift;
  if (keep == (1ul << 53)) {
    keep >>= 1;
    ++ke;
  }
  return Dbl(keep, ke, neg);
}

// An exact product (|p| < 2^64 as an integer times 2^e) as a double.
Dbl dbl_exact(bool neg, uint64_t m, int e) { return dbl_round(neg, m, e, false); }

// double(f) * double(k), exact (24 x 8 bits).
Dbl dbl_mul_fi(float f, int k) {
  uint64_t m;
  int e;
  split_float(f, m, e);
  const bool neg = (f < 0.0) != (k < 0);
  return dbl_exact(neg, m * uint64_t(abs(k)), e);
}

// double(f) * double(f), exact (24 x 24 bits).
Dbl dbl_sq(float f) {
  uint64_t m;
  int e;
  split_float(f, m, e);
  return dbl_exact(false, m * m, 2 * e);
}

// a + b rounded to nearest even. Ten guard bits plus a sticky bit jammed into the lowest
// one round as the exact sum would, for sums and cancelling differences alike.
Dbl dbl_add(Dbl a, Dbl b) {
  if (b.m == 0ul) return a;
  if (a.m == 0ul) return b;
  if (b.e > a.e || (b.e == a.e && b.m > a.m)) {
    const Dbl t = a;
    a = b;
    b = t;
  }
  const uint64_t am = a.m << 10;
  const int d = a.e - b.e;
  uint64_t bm = b.m << 10;
  if (d > 0) {
    if (d > 62) {
      bm = 1ul;
    } else {
      const bool lost = (bm & ((1ul << d) - 1ul)) != 0ul;
      bm = (bm >> d) | (lost ? 1ul : 0ul);
    }
  }
  if (a.neg == b.neg) return dbl_round(a.neg, am + bm, a.e - 10, false);
  return dbl_round(a.neg, am - bm, a.e - 10, false);  // am >= bm: |a| >= |b|
}

// Whether a < b for doubles that are >= 0.
bool dbl_less_nonneg(Dbl a, Dbl b) {
  if (a.m == 0ul) return b.m != 0ul;
  if (b.m == 0ul) return false;
  return a.e < b.e || (a.e == b.e && a.m < b.m);
}

// float(a / double(n)) for an integer 0 < n < 2^20: the double quotient rounded to
// nearest even, then to a float, as C++'s static_cast<float>(a / n) does.
float dbl_div_int_to_float(Dbl a, uint n) {
  if (a.m == 0ul) return 0.0;
  const uint64_t num = a.m << 11;  // >= 2^63
  const uint64_t q1 = num / uint64_t(n);
  const uint64_t r1 = num - q1 * uint64_t(n);
  // Extend the quotient to 60 bits: r1 < n < 2^20, so r1 << s stays below 2^64.
  const int s = 60 - (msb64(q1) + 1);
  uint64_t q = q1, r = r1;
  if (s > 0) {
    const uint64_t n2 = r1 << s;
    const uint64_t q2 = n2 / uint64_t(n);
    q = (q1 << s) | q2;
    r = n2 - q2 * uint64_t(n);
  }
  const Dbl d = dbl_round(a.neg, q, a.e - 11 - max(s, 0), r != 0ul);
  return round_to_float(a.neg ? 0x80000000u : 0u, d.m, d.e, false);
}
