// Block quantizers of the 256-element K-quants: Q2_K Q3_K Q4_K Q5_K Q6_K Q8_K.
// Two levels as in the format: a float scale (and min) per sub-block found by search, then
// those quantized to 4/6/8 bits against f16 super-block scales; finally each sub-block's
// integer scale (and min) is tuned by +-1 and its values re-rounded, keeping the best.
#include <algorithm>

#include "quant_internal.hpp"

namespace sy::quant {
namespace {

// Affine fit with a non-positive offset: x ~ s*q - m, q in [0, nmax], s >= 0, m >= 0.
void fit_affine_nonneg_min(const float* x, const float* w, int n, int nmax, float& s, float& m) {
  uint8_t q[32];
  float d, off;
  best_affine(x, w, n, nmax, q, d, off);
  if (off <= 0 && d >= 0) {
    s = d;
    m = -off;
    return;
  }
  // The best offset is positive, which K-quants cannot store: fit x ~ s*q alone.
  float mx = 0;
  for (int i = 0; i < n; ++i) mx = std::max(mx, x[i]);
  s = mx / static_cast<float>(nmax);
  m = 0;
}

double affine_err(const float* x, const float* w, int n, int nmax, float dl, float ml, uint8_t* q) {
  double err = 0;
  for (int i = 0; i < n; ++i) {
    const int l = dl > 0 ? clampi(nearest((x[i] + ml) / dl), 0, nmax) : 0;
    if (q) q[i] = static_cast<uint8_t>(l);
    const double e = x[i] - (dl * static_cast<float>(l) - ml);
    err += wt(w, i) * e * e;
  }
  return err;
}

// The shared two-level scheme of Q2_K, Q4_K and Q5_K. Outputs f16 d, dmin, the integer
// scale and min of each sub-block, and every level.
void k_affine(const float* x, const float* w, int n_sub, int sub_len, int nmax, int smax, float& d, float& dmin,
              uint8_t* ls, uint8_t* lm, uint8_t* levels) {
  float sc[16], mn[16];
  float max_scale = 0, max_min = 0;
  for (int i = 0; i < n_sub; ++i) {
    fit_affine_nonneg_min(x + i * sub_len, w ? w + i * sub_len : nullptr, sub_len, nmax, sc[i], mn[i]);
    max_scale = std::max(max_scale, sc[i]);
    max_min = std::max(max_min, mn[i]);
  }
  d = f16r(max_scale / static_cast<float>(smax));
  dmin = f16r(max_min / static_cast<float>(smax));
  for (int i = 0; i < n_sub; ++i) {
    const float* xs = x + i * sub_len;
    const float* ws = w ? w + i * sub_len : nullptr;
    const int l0 = d > 0 ? clampi(nearest(sc[i] / d), 0, smax) : 0;
    const int m0 = dmin > 0 ? clampi(nearest(mn[i] / dmin), 0, smax) : 0;
    double best = INFINITY;
    for (int dl = -1; dl <= 1; ++dl)
      for (int dm = -1; dm <= 1; ++dm) {
        const int l = clampi(l0 + dl, 0, smax), m = clampi(m0 + dm, 0, smax);
        const double e = affine_err(xs, ws, sub_len, nmax, d * static_cast<float>(l), dmin * static_cast<float>(m), nullptr);
        if (e < best) {
          best = e;
          ls[i] = static_cast<uint8_t>(l);
          lm[i] = static_cast<uint8_t>(m);
        }
      }
    affine_err(xs, ws, sub_len, nmax, d * ls[i], dmin * lm[i], levels + i * sub_len);
  }
}

// Symmetric two-level scheme of Q3_K and Q6_K: signed integer sub-block scales in [slo, shi]
// against one f16 d, levels in [lo, hi].
float k_symmetric(const float* x, const float* w, int lo, int hi, int slo, int shi, int8_t* ls, int8_t* levels) {
  float sc[16];
  float max_scale = 0, amax = 0;
  int8_t tmp[16];
  for (int i = 0; i < 16; ++i) {
    sc[i] = best_symmetric(x + 16 * i, w ? w + 16 * i : nullptr, 16, lo, hi, tmp);
    if (std::fabs(sc[i]) > amax) {
      amax = std::fabs(sc[i]);
      max_scale = sc[i];
    }
  }
  if (amax == 0) {
    std::fill(ls, ls + 16, 0);
    std::fill(levels, levels + 256, 0);
    return 0;
  }
  const float d = f16r(max_scale / static_cast<float>(slo));  // the largest scale maps to slo
  for (int i = 0; i < 16; ++i) {
    const float* xs = x + 16 * i;
    const int l0 = clampi(nearest(sc[i] / d), slo, shi);
    double best = INFINITY;
    for (int dl = -1; dl <= 1; ++dl) {
      const int l = clampi(l0 + dl, slo, shi);
      const float s = d * static_cast<float>(l);
      double err = 0;
      for (int j = 0; j < 16; ++j) {
        const int q = s != 0 ? clampi(nearest(xs[j] / s), lo, hi) : 0;
        const double e = xs[j] - s * static_cast<float>(q);
        err += wt(w, 16 * i + j) * e * e;
      }
      if (err < best) {
        best = err;
        ls[i] = static_cast<int8_t>(l);
      }
    }
    const float s = d * static_cast<float>(ls[i]);
    for (int j = 0; j < 16; ++j) levels[16 * i + j] = static_cast<int8_t>(s != 0 ? clampi(nearest(xs[j] / s), lo, hi) : 0);
  }
  return d;
}

// Packs 8 (scale, min) 6-bit pairs into the 12-byte K-quant layout (inverse of the
// dequantizer's scale_min_k4).
void pack_scale_min_k4(const uint8_t* sc, const uint8_t* m, u8* s) {
  for (int j = 0; j < 4; ++j) {
    s[j] = sc[j];
    s[j + 4] = m[j];
  }
  for (int j = 4; j < 8; ++j) {
    s[j + 4] = static_cast<u8>((sc[j] & 0xf) | ((m[j] & 0xf) << 4));
    s[j - 4] = static_cast<u8>(s[j - 4] | ((sc[j] >> 4) << 6));
    s[j] = static_cast<u8>(s[j] | ((m[j] >> 4) << 6));
  }
}

}  // namespace

void q2_k(const float* x, const float* w, u8* b) {
  float d, dmin;
  uint8_t ls[16], lm[16], L[256];
  k_affine(x, w, 16, 16, 3, 15, d, dmin, ls, lm, L);
  for (int i = 0; i < 16; ++i) b[i] = static_cast<u8>(ls[i] | (lm[i] << 4));
  u8* qs = b + 16;
  std::memset(qs, 0, 64);
  for (int h = 0; h < 2; ++h)
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < 32; ++k) qs[h * 32 + k] = static_cast<u8>(qs[h * 32 + k] | (L[h * 128 + s * 32 + k] << (2 * s)));
  put16(b + 80, fp32_to_fp16(d));
  put16(b + 82, fp32_to_fp16(dmin));
}

void q3_k(const float* x, const float* w, u8* b) {
  int8_t ls[16], L[256];
  const float d = k_symmetric(x, w, -4, 3, -32, 31, ls, L);
  u8* hm = b;
  u8* qs = b + 32;
  u8* sc = b + 96;
  std::memset(b, 0, 108);
  for (int h = 0; h < 2; ++h)
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < 32; ++k) {
        const int u = L[h * 128 + s * 32 + k] + 4;
        qs[h * 32 + k] = static_cast<u8>(qs[h * 32 + k] | ((u & 3) << (2 * s)));
        if (u >> 2) hm[k] = static_cast<u8>(hm[k] | (1 << (h * 4 + s)));
      }
  for (int i = 0; i < 16; ++i) {
    const int v = ls[i] + 32;
    if (i < 8)
      sc[i] = static_cast<u8>(sc[i] | (v & 0xf));
    else
      sc[i - 8] = static_cast<u8>(sc[i - 8] | ((v & 0xf) << 4));
    sc[8 + i % 4] = static_cast<u8>(sc[8 + i % 4] | ((v >> 4) << (2 * (i / 4))));
  }
  put16(b + 108, fp32_to_fp16(d));
}

void q4_k(const float* x, const float* w, u8* b) {
  float d, dmin;
  uint8_t ls[8], lm[8], L[256];
  k_affine(x, w, 8, 32, 15, 63, d, dmin, ls, lm, L);
  put16(b, fp32_to_fp16(d));
  put16(b + 2, fp32_to_fp16(dmin));
  pack_scale_min_k4(ls, lm, b + 4);
  u8* qs = b + 16;
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) qs[32 * p + l] = static_cast<u8>(L[64 * p + l] | (L[64 * p + 32 + l] << 4));
}

void q5_k(const float* x, const float* w, u8* b) {
  float d, dmin;
  uint8_t ls[8], lm[8], L[256];
  k_affine(x, w, 8, 32, 31, 63, d, dmin, ls, lm, L);
  put16(b, fp32_to_fp16(d));
  put16(b + 2, fp32_to_fp16(dmin));
  pack_scale_min_k4(ls, lm, b + 4);
  u8* qh = b + 16;
  u8* ql = b + 48;
  std::memset(qh, 0, 32);
  for (int p = 0; p < 4; ++p)
    for (int l = 0; l < 32; ++l) {
      const int a = L[64 * p + l], c = L[64 * p + 32 + l];
      ql[32 * p + l] = static_cast<u8>((a & 0xf) | ((c & 0xf) << 4));
      qh[l] = static_cast<u8>(qh[l] | ((a >> 4) << (2 * p)) | ((c >> 4) << (2 * p + 1)));
    }
}

void q6_k(const float* x, const float* w, u8* b) {
  int8_t ls[16], L[256];
  const float d = k_symmetric(x, w, -32, 31, -128, 127, ls, L);
  u8* ql = b;
  u8* qh = b + 128;
  std::memset(b, 0, 192);
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int u0 = L[h * 128 + l] + 32, u1 = L[h * 128 + 32 + l] + 32;
      const int u2 = L[h * 128 + 64 + l] + 32, u3 = L[h * 128 + 96 + l] + 32;
      ql[h * 64 + l] = static_cast<u8>((u0 & 0xf) | ((u2 & 0xf) << 4));
      ql[h * 64 + 32 + l] = static_cast<u8>((u1 & 0xf) | ((u3 & 0xf) << 4));
      qh[h * 32 + l] = static_cast<u8>((u0 >> 4) | ((u1 >> 4) << 2) | ((u2 >> 4) << 4) | ((u3 >> 4) << 6));
    }
  std::memcpy(b + 192, ls, 16);
  put16(b + 208, fp32_to_fp16(d));
}

// Q8_K is the activation type of the K-quant dot products: f32 scale, plus the sums of
// each 16 levels that the Q2_K..Q5_K kernels need for their mins.
void q8_k(const float* x, const float*, u8* b) {
  float amax = 0, max = 0;
  for (int i = 0; i < 256; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  int8_t q[256] = {};
  float d = 0;
  if (amax > 0) {
    const float iscale = -127.f / max;
    for (int i = 0; i < 256; ++i) q[i] = static_cast<int8_t>(std::min(127, nearest(iscale * x[i])));
    d = 1 / iscale;
  }
  std::memcpy(b, &d, 4);
  std::memcpy(b + 4, q, 256);
  for (int g = 0; g < 16; ++g) {
    int16_t sum = 0;
    for (int i = 0; i < 16; ++i) sum = static_cast<int16_t>(sum + q[16 * g + i]);
    std::memcpy(b + 260 + 2 * g, &sum, 2);
  }
}

}  // namespace sy::quant
