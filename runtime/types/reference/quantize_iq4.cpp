// Block quantizers of the non-linear 4-bit types IQ4_NL (32 elements) and IQ4_XS (256).
#include <algorithm>

#include "quant_internal.hpp"

namespace sy::quant {
namespace {

constexpr int8_t kGrid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Index of the grid value nearest to v (the grid is sorted).
int nearest_index(float v) {
  if (v <= kGrid[0]) return 0;
  if (v >= kGrid[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (v < kGrid[mid] ? hi : lo) = mid;
  }
  return v - kGrid[lo] < kGrid[hi] - v ? lo : hi;
}

double grid_err(const float* x, const float* w, int n, float d, uint8_t* idx) {
  double err = 0;
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) {
    const int k = nearest_index(x[i] * id);
    if (idx) idx[i] = static_cast<uint8_t>(k);
    const double e = x[i] - d * kGrid[k];
    err += wt(w, i) * e * e;
  }
  return err;
}

// Best scale for a 32-value block on the grid: candidates from the reference
// (d = max / grid[0], and +-7 steps) and half steps between, each refit by least squares.
// `round16` judges candidates after f16 rounding (IQ4_NL stores d itself).
float best_grid_scale(const float* x, const float* w, int n, bool round16) {
  float amax = 0, max = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  if (amax == 0) return 0;
  double best = INFINITY;
  float best_d = 0;
  uint8_t idx[256];
  for (int t = -14; t <= 14; ++t) {
    const float id = (0.5f * static_cast<float>(t) + kGrid[0]) / max;
    grid_err(x, w, n, 1.0f / id, idx);
    double sxg = 0, sgg = 0;
    for (int i = 0; i < n; ++i) {
      sxg += wt(w, i) * x[i] * kGrid[idx[i]];
      sgg += wt(w, i) * kGrid[idx[i]] * kGrid[idx[i]];
    }
    for (float d : {1.0f / id, sgg > 0 ? static_cast<float>(sxg / sgg) : 0.0f}) {
      if (round16) d = f16r(d);
      const double e = grid_err(x, w, n, d, nullptr);
      if (e < best) {
        best = e;
        best_d = d;
      }
    }
  }
  return best_d;
}

}  // namespace

void iq4_nl(const float* x, const float* w, u8* b) {
  const float d = best_grid_scale(x, w, 32, true);
  uint8_t idx[32];
  grid_err(x, w, 32, d, idx);
  put16(b, fp32_to_fp16(d));
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<u8>(idx[j] | (idx[j + 16] << 4));
}

void iq4_xs(const float* x, const float* w, u8* b) {
  float sc[8], max_scale = 0, amax = 0;
  for (int i = 0; i < 8; ++i) {
    sc[i] = best_grid_scale(x + 32 * i, w ? w + 32 * i : nullptr, 32, false);
    if (std::fabs(sc[i]) > amax) {
      amax = std::fabs(sc[i]);
      max_scale = sc[i];
    }
  }
  const float d = f16r(-max_scale / 32);  // the largest scale maps to -32
  uint16_t sh = 0;
  std::memset(b + 4, 0, 4);
  for (int i = 0; i < 8; ++i) {
    const float* xs = x + 32 * i;
    const float* ws = w ? w + 32 * i : nullptr;
    int best_l = 0;
    if (d != 0) {
      const int l0 = clampi(nearest(sc[i] / d), -32, 31);
      double best = INFINITY;
      for (int dl = -1; dl <= 1; ++dl) {
        const int l = clampi(l0 + dl, -32, 31);
        const double e = grid_err(xs, ws, 32, d * static_cast<float>(l), nullptr);
        if (e < best) {
          best = e;
          best_l = l;
        }
      }
    }
    uint8_t idx[32];
    grid_err(xs, ws, 32, d * static_cast<float>(best_l), idx);
    const int ls = best_l + 32;
    b[4 + i / 2] = static_cast<u8>(b[4 + i / 2] | ((ls & 0xf) << (4 * (i % 2))));
    sh = static_cast<uint16_t>(sh | ((ls >> 4) << (2 * i)));
    for (int j = 0; j < 16; ++j) b[8 + 16 * i + j] = static_cast<u8>(idx[j] | (idx[j + 16] << 4));
  }
  put16(b, fp32_to_fp16(d));
  put16(b + 2, sh);
}

}  // namespace sy::quant
