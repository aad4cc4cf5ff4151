// Scalar reference dot products: integer sums inside each block, float per block, in
// block order. Every SIMD kernel must agree with these within float rounding.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dot.hpp"
#include "kquant_scales.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

using u8 = uint8_t;
float h2f(const u8* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return fp16_to_fp32(v);
}
constexpr int8_t kIQ4[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Activation blocks.
struct A0 {  // Q8_0: f16 d + 32 int8
  static constexpr int bytes = 34;
  static float d(const u8* b) { return h2f(b); }
  static const int8_t* q(const u8* b) { return reinterpret_cast<const int8_t*>(b + 2); }
};
struct AK {  // Q8_K: f32 d + 256 int8 + 16 int16 sums
  static constexpr int bytes = 292;
  static float d(const u8* b) {
    float v;
    std::memcpy(&v, b, 4);
    return v;
  }
  static const int8_t* q(const u8* b) { return reinterpret_cast<const int8_t*>(b + 4); }
  static int16_t bsum(const u8* b, int g) {
    int16_t v;
    std::memcpy(&v, b + 260 + 2 * g, 2);
    return v;
  }
};

float dot_f32(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

float dot_f16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const u8*>(w);
  const auto* y = static_cast<const float*>(a);
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += h2f(x + 2 * i) * y[i];
  return s;
}

// BF16 weights pair with BF16 activations, as in llama.cpp's CPU path (its dot type for
// BF16 is BF16): each product is exact in f32, sums are f32.
float dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const u8*>(w);
  const auto* y = static_cast<const u8*>(a);
  float s = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t wv, av;
    std::memcpy(&wv, x + 2 * i, 2);
    std::memcpy(&av, y + 2 * i, 2);
    s += bf16_to_fp32(wv) * bf16_to_fp32(av);
  }
  return s;
}

// The 32 levels of a 32-element weight block (as they multiply the activation levels),
// and the block's affine offset m (0 for symmetric types).
template <class F>
float dot_32(int64_t n, const void* w, const void* a, int wbytes, F levels) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  float s = 0;
  for (int64_t i = 0; i < n / 32; ++i, wb += wbytes, ab += A0::bytes) {
    int lv[32];
    float d, m;
    levels(wb, lv, d, m);
    const int8_t* q = A0::q(ab);
    int sum = 0, qsum = 0;
    for (int j = 0; j < 32; ++j) {
      sum += lv[j] * q[j];
      qsum += q[j];
    }
    s += d * A0::d(ab) * static_cast<float>(sum) + m * A0::d(ab) * static_cast<float>(qsum);
  }
  return s;
}

float dot_q8_0(int64_t n, const void* w, const void* a) {
  return dot_32(n, w, a, 34, [](const u8* b, int* lv, float& d, float& m) {
    d = h2f(b);
    m = 0;
    for (int j = 0; j < 32; ++j) lv[j] = reinterpret_cast<const int8_t*>(b + 2)[j];
  });
}

float dot_q4_0(int64_t n, const void* w, const void* a) {
  return dot_32(n, w, a, 18, [](const u8* b, int* lv, float& d, float& m) {
    d = h2f(b);
    m = 0;
    for (int j = 0; j < 16; ++j) {
      lv[j] = (b[2 + j] & 0xf) - 8;
      lv[j + 16] = (b[2 + j] >> 4) - 8;
    }
  });
}

float dot_q4_1(int64_t n, const void* w, const void* a) {
  return dot_32(n, w, a, 20, [](const u8* b, int* lv, float& d, float& m) {
    d = h2f(b);
    m = h2f(b + 2);
    for (int j = 0; j < 16; ++j) {
      lv[j] = b[4 + j] & 0xf;
      lv[j + 16] = b[4 + j] >> 4;
    }
  });
}

void q5_levels(const u8* qhp, const u8* qs, int* lv, int offset) {
  uint32_t qh;
  std::memcpy(&qh, qhp, 4);
  for (int j = 0; j < 16; ++j) {
    lv[j] = ((qs[j] & 0xf) | static_cast<int>(((qh >> j) & 1) << 4)) - offset;
    lv[j + 16] = ((qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4)) - offset;
  }
}

float dot_q5_0(int64_t n, const void* w, const void* a) {
  return dot_32(n, w, a, 22, [](const u8* b, int* lv, float& d, float& m) {
    d = h2f(b);
    m = 0;
    q5_levels(b + 2, b + 6, lv, 16);
  });
}

float dot_q5_1(int64_t n, const void* w, const void* a) {
  return dot_32(n, w, a, 24, [](const u8* b, int* lv, float& d, float& m) {
    d = h2f(b);
    m = h2f(b + 2);
    q5_levels(b + 4, b + 8, lv, 0);
  });
}

float dot_iq4_nl(int64_t n, const void* w, const void* a) {
  return dot_32(n, w, a, 18, [](const u8* b, int* lv, float& d, float& m) {
    d = h2f(b);
    m = 0;
    for (int j = 0; j < 16; ++j) {
      lv[j] = kIQ4[b[2 + j] & 0xf];
      lv[j + 16] = kIQ4[b[2 + j] >> 4];
    }
  });
}

// K-quants: the weight super-block is expanded to 256 integer levels plus, per 16
// elements, an integer scale and min; d and dmin multiply the integer sums.
struct KLevels {
  int lv[256];
  int sc[16];  // per 16 elements
  int mn[16];  // per 16 elements (affine types)
  float d = 0, dmin = 0;
};

template <class F>
float dot_k(int64_t n, const void* w, const void* a, int wbytes, F expand) {
  const auto* wb = static_cast<const u8*>(w);
  const auto* ab = static_cast<const u8*>(a);
  float s = 0;
  KLevels k;
  for (int64_t i = 0; i < n / 256; ++i, wb += wbytes, ab += AK::bytes) {
    expand(wb, k);
    const int8_t* q = AK::q(ab);
    int64_t sum = 0, msum = 0;
    for (int g = 0; g < 16; ++g) {
      int gs = 0;
      for (int j = 0; j < 16; ++j) gs += k.lv[16 * g + j] * q[16 * g + j];
      sum += static_cast<int64_t>(k.sc[g]) * gs;
      msum += static_cast<int64_t>(k.mn[g]) * AK::bsum(ab, g);
    }
    const float da = AK::d(ab);
    s += k.d * da * static_cast<float>(sum) - k.dmin * da * static_cast<float>(msum);
  }
  return s;
}

void scale_min_k4(int j, const u8* s, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

float dot_q2_k(int64_t n, const void* w, const void* a) {
  return dot_k(n, w, a, 84, [](const u8* b, KLevels& k) {
    k.d = h2f(b + 80);
    k.dmin = h2f(b + 82);
    for (int g = 0; g < 16; ++g) {
      k.sc[g] = b[g] & 0xf;
      k.mn[g] = b[g] >> 4;
    }
    for (int h = 0; h < 2; ++h)
      for (int s = 0; s < 4; ++s)
        for (int kk = 0; kk < 32; ++kk) k.lv[h * 128 + s * 32 + kk] = (b[16 + h * 32 + kk] >> (2 * s)) & 3;
  });
}

float dot_q3_k(int64_t n, const void* w, const void* a) {
  return dot_k(n, w, a, 110, [](const u8* b, KLevels& k) {
    k.d = h2f(b + 108);
    k.dmin = 0;
    q3k_scales(b + 96, k.sc);
    for (int i = 0; i < 16; ++i) k.mn[i] = 0;
    for (int h = 0; h < 2; ++h)
      for (int s = 0; s < 4; ++s)
        for (int kk = 0; kk < 32; ++kk) {
          const int lo = (b[32 + h * 32 + kk] >> (2 * s)) & 3;
          const int hi = (b[kk] >> (h * 4 + s)) & 1;
          k.lv[h * 128 + s * 32 + kk] = lo - (hi ? 0 : 4);
        }
  });
}

template <bool Q5>
void expand_q45k(const u8* b, KLevels& k) {
  k.d = h2f(b);
  k.dmin = h2f(b + 2);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    scale_min_k4(j, b + 4, sc, m);
    k.sc[2 * j] = k.sc[2 * j + 1] = sc;
    k.mn[2 * j] = k.mn[2 * j + 1] = m;
  }
  const u8* qh = b + 16;
  const u8* ql = b + (Q5 ? 48 : 16);
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      int lo = ql[32 * p + l] & 0xf, hi = ql[32 * p + l] >> 4;
      if (Q5) {
        lo += ((qh[l] >> (2 * p)) & 1) << 4;
        hi += ((qh[l] >> (2 * p + 1)) & 1) << 4;
      }
      k.lv[64 * p + l] = lo;
      k.lv[64 * p + 32 + l] = hi;
    }
}

float dot_q4_k(int64_t n, const void* w, const void* a) { return dot_k(n, w, a, 144, expand_q45k<false>); }
float dot_q5_k(int64_t n, const void* w, const void* a) { return dot_k(n, w, a, 176, expand_q45k<true>); }

float dot_q6_k(int64_t n, const void* w, const void* a) {
  return dot_k(n, w, a, 210, [](const u8* b, KLevels& k) {
    k.d = h2f(b + 208);
    k.dmin = 0;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    for (int g = 0; g < 16; ++g) {
      k.sc[g] = sc[g];
      k.mn[g] = 0;
    }
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 32; ++l) {
        const u8* ql = b + h * 64;
        const u8 qh = b[128 + h * 32 + l];
        k.lv[h * 128 + l] = ((ql[l] & 0xf) | (((qh >> 0) & 3) << 4)) - 32;
        k.lv[h * 128 + 32 + l] = ((ql[l + 32] & 0xf) | (((qh >> 2) & 3) << 4)) - 32;
        k.lv[h * 128 + 64 + l] = ((ql[l] >> 4) | (((qh >> 4) & 3) << 4)) - 32;
        k.lv[h * 128 + 96 + l] = ((ql[l + 32] >> 4) | (((qh >> 6) & 3) << 4)) - 32;
      }
  });
}

float dot_iq4_xs(int64_t n, const void* w, const void* a) {
  return dot_k(n, w, a, 136, [](const u8* b, KLevels& k) {
    k.d = h2f(b);
    k.dmin = 0;
    uint16_t sh;
    std::memcpy(&sh, b + 2, 2);
    for (int ib = 0; ib < 8; ++ib) {
      const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
      k.sc[2 * ib] = k.sc[2 * ib + 1] = ls - 32;
      k.mn[2 * ib] = k.mn[2 * ib + 1] = 0;
      const u8* qs = b + 8 + 16 * ib;
      for (int j = 0; j < 16; ++j) {
        k.lv[32 * ib + j] = kIQ4[qs[j] & 0xf];
        k.lv[32 * ib + 16 + j] = kIQ4[qs[j] >> 4];
      }
    }
  });
}

}  // namespace

// Activation conversion uses the plain recipes (as llama.cpp does per matmul): they run
// once per row of activations and must be cheap; the SDK's searching quantizers are for
// weights.
void act_f32(int64_t n, const float* x, void* out) { std::memcpy(out, x, static_cast<size_t>(n) * 4); }

void act_bf16(int64_t n, const float* x, void* out) {
  auto* b = static_cast<u8*>(out);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t v = fp32_to_bf16(x[i]);
    std::memcpy(b + 2 * i, &v, 2);
  }
}

// x * id lies within [-127, 127] for finite activations. A damaged model can feed NaN or
// infinities, whose conversion to an integer is undefined in C++: saturate them as the SIMD
// paths' packs do, and read NaN as 0.
static int8_t to_q8(float v) {
  if (v >= 127.f) return 127;
  if (v <= -128.f) return -128;
  return v == v ? static_cast<int8_t>(v) : int8_t{0};
}

void act_q8_0(int64_t n, const float* x, void* out) {
  auto* b = static_cast<u8*>(out);
  for (int64_t i = 0; i < n / 32; ++i, x += 32, b += 34) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const uint16_t dh = fp32_to_fp16(d);
    std::memcpy(b, &dh, 2);
    for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<u8>(to_q8(std::round(x[j] * id)));
  }
}

void act_q8_k(int64_t n, const float* x, void* out) {
  // The Q8_K recipe is already the plain one.
  (void)quantize_row(StorageType::Q8_K, x, out, n);
}

DotKernel dot_kernel_scalar(StorageType w) {
  using T = StorageType;
  auto q0 = [](DotFn f) { return DotKernel{T::Q8_0, f, act_q8_0, Isa::scalar}; };
  auto qk = [](DotFn f) { return DotKernel{T::Q8_K, f, act_q8_k, Isa::scalar}; };
  auto fl = [](DotFn f) { return DotKernel{T::F32, f, act_f32, Isa::scalar}; };
  switch (w) {
    case T::F32: return fl(dot_f32);
    case T::F16: return fl(dot_f16);
    case T::BF16: return {T::BF16, dot_bf16, act_bf16, Isa::scalar};
    case T::Q4_0: return q0(dot_q4_0);
    case T::Q4_1: return q0(dot_q4_1);
    case T::Q5_0: return q0(dot_q5_0);
    case T::Q5_1: return q0(dot_q5_1);
    case T::Q8_0: return q0(dot_q8_0);
    case T::IQ4_NL: return q0(dot_iq4_nl);
    case T::Q2_K: return qk(dot_q2_k);
    case T::Q3_K: return qk(dot_q3_k);
    case T::Q4_K: return qk(dot_q4_k);
    case T::Q5_K: return qk(dot_q5_k);
    case T::Q6_K: return qk(dot_q6_k);
    case T::IQ4_XS: return qk(dot_iq4_xs);
    default: {
      const DotKernel grouped = dot_kernel_scalar_grouped(w);
      return grouped.dot ? grouped : dot_kernel_scalar_x16(w);
    }
  }
}

}  // namespace sy::cpu
