// Scale searches shared by the block quantizers: candidates around the reference choice,
// each refit by least squares, judged by the squared error after f16 rounding.
#include <algorithm>

#include "quant_internal.hpp"

namespace sy::quant {

float best_symmetric(const float* x, const float* w, int n, int lo, int hi, int8_t* q) {
  float amax = 0, max = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  if (amax == 0) {
    std::fill(q, q + n, 0);
    return 0;
  }
  int8_t cand[256];
  double best_err = INFINITY;
  float best_d = 0;
  // t = the level the largest-magnitude value maps to; the reference uses t = lo.
  for (int k = 0; k <= 24; ++k) {
    for (int side = 0; side < 2; ++side) {
      const float t = side == 0 ? static_cast<float>(lo) + 0.25f * static_cast<float>(k)
                                : static_cast<float>(hi) - 0.25f * static_cast<float>(k);
      if (t == 0 || (side == 1 && t <= 0) || (side == 0 && t >= 0)) continue;
      const float d0 = max / t;
      const float id = 1.0f / d0;
      double sxq = 0, sqq = 0;
      for (int i = 0; i < n; ++i) {
        cand[i] = static_cast<int8_t>(clampi(nearest(x[i] * id), lo, hi));
        sxq += wt(w, i) * x[i] * cand[i];
        sqq += wt(w, i) * cand[i] * cand[i];
      }
      // The unrefit d (the reference's) and the least-squares d for these levels.
      for (int refit = 0; refit < 2; ++refit) {
        const float d = f16r(refit ? (sqq > 0 ? static_cast<float>(sxq / sqq) : 0.f) : d0);
        double err = 0;
        for (int i = 0; i < n; ++i) {
          const double e = x[i] - d * static_cast<float>(cand[i]);
          err += wt(w, i) * e * e;
        }
        if (err < best_err) {
          best_err = err;
          best_d = d;
          std::copy(cand, cand + n, q);
        }
      }
    }
  }
  // Each value's level is re-chosen for the final d: never worse than the candidate's.
  if (best_d != 0)
    for (int i = 0; i < n; ++i) q[i] = static_cast<int8_t>(clampi(nearest(x[i] / best_d), lo, hi));
  return best_d;
}

void best_affine(const float* x, const float* w, int n, int nmax, uint8_t* q, float& d_out, float& m_out) {
  float mn = x[0], mx = x[0];
  for (int i = 1; i < n; ++i) {
    mn = std::min(mn, x[i]);
    mx = std::max(mx, x[i]);
  }
  if (mx == mn) {
    std::fill(q, q + n, 0);
    d_out = 0;
    m_out = f16r(mn);
    return;
  }
  uint8_t cand[256];
  double best_err = INFINITY;
  for (int k = -8; k <= 8; ++k) {
    // Shrink or widen the range a little around the reference's exact [min, max].
    const float scale = (mx - mn) / (static_cast<float>(nmax) + 0.1f * static_cast<float>(k));
    if (scale <= 0) continue;
    const float iscale = 1.0f / scale;
    double sw = 0, sx = 0, sq = 0, sxq = 0, sqq = 0;
    for (int i = 0; i < n; ++i) {
      cand[i] = static_cast<uint8_t>(clampi(nearest((x[i] - mn) * iscale), 0, nmax));
      const double wi = wt(w, i);
      sw += wi;
      sx += wi * x[i];
      sq += wi * cand[i];
      sxq += wi * x[i] * cand[i];
      sqq += wi * cand[i] * cand[i];
    }
    const double det = sw * sqq - sq * sq;
    float fits[2][2] = {{scale, mn}, {scale, mn}};
    if (det > 0) {
      fits[1][0] = static_cast<float>((sw * sxq - sx * sq) / det);
      fits[1][1] = static_cast<float>((sx - fits[1][0] * sq) / sw);
    }
    for (const auto& f : fits) {
      const float d = f16r(f[0]), m = f16r(f[1]);
      double err = 0;
      for (int i = 0; i < n; ++i) {
        const double e = x[i] - (static_cast<float>(cand[i]) * d + m);
        err += wt(w, i) * e * e;
      }
      if (err < best_err) {
        best_err = err;
        d_out = d;
        m_out = m;
        std::copy(cand, cand + n, q);
      }
    }
  }
  // Levels are final only for the chosen (d, m): re-round each value against them.
  if (d_out > 0)
    for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(clampi(nearest((x[i] - m_out) / d_out), 0, nmax));
}

}  // namespace sy::quant
