// One 32-element block quantized to Q8_0 or Q4_0 (-DQ8_0 or -DQ4_0) with the bytes the
// SDK's quantize_row gives it: the same scale search (best_symmetric in
// sdk/src/quantize_scale.cpp), its candidates evaluated in parallel by one workgroup of at
// least 50 threads. Thread c < 50 tries candidate level t = lo + c/2 / 4 (c even) or
// hi - c/2 / 4 (c odd) with both the plain and the least-squares scale; the first smallest
// error wins, as in the SDK's sequential loop. Requires common.glsl and set_rows_exact.glsl.
//
// The caller fills xs[0..31] (then barrier()) and calls quantize_block() from uniform
// control flow; before refilling xs for the next block it barrier()s again, since
// quantize_block's last readers of xs and levels may still be running.

#if defined(Q8_0)
#define QLO (-127)
#define QHI 127
#define BLOCK_BYTES 34
#elif defined(Q4_0)
#define QLO (-8)
#define QHI 7
#define BLOCK_BYTES 18
#else
#error "define Q8_0 or Q4_0"
#endif

#define CANDIDATES 50

shared float xs[32];
shared uint64_t err_m[2 * CANDIDATES];  // each trial's squared error (a software double, >= 0)
shared int err_e[2 * CANDIDATES];
shared bool err_ok[2 * CANDIDATES];     // false: the candidate was skipped
shared float trial_d[2 * CANDIDATES];
shared int best;
shared int levels[32];

float candidate_t(int c) {
  const float k = float(c >> 1);
  return (c & 1) == 0 ? float(QLO) + 0.25 * k : float(QHI) - 0.25 * k;
}

// A value's level under a trial scale whose reciprocal is id.
int cand_level(float x, float id) {
  precise float v = x * id;
  return int(clamp(roundEven(v), float(QLO), float(QHI)));
}

Dbl sq_error(float d, int lv[32]) {
  Dbl err = dbl_zero();
  for (int i = 0; i < 32; ++i) {
    precise float e = xs[i] - d * float(lv[i]);
    err = dbl_add(err, dbl_sq(e));
  }
  return err;
}

// Quantizes xs into the BLOCK_BYTES at blk; tid is the thread's index in the workgroup.
void quantize_block(int tid, uint64_t blk) {
  float amax = 0.0, mx = 0.0;
  for (int i = 0; i < 32; ++i)
    if (abs(xs[i]) > amax) {
      amax = abs(xs[i]);
      mx = xs[i];
    }
  if (tid < CANDIDATES && amax != 0.0) {
    const float t = candidate_t(tid);
    const bool skip = t == 0.0 || ((tid & 1) == 1 && t <= 0.0) || ((tid & 1) == 0 && t >= 0.0);
    err_ok[2 * tid] = !skip;
    err_ok[2 * tid + 1] = !skip;
    if (!skip) {
      const float d0 = div_rn(mx, t);
      const float id = div_rn(1.0, d0);
      int lv[32];
      Dbl sxq = dbl_zero();
      uint sqq = 0u;
      for (int i = 0; i < 32; ++i) {
        lv[i] = cand_level(xs[i], id);
        sxq = dbl_add(sxq, dbl_mul_fi(xs[i], lv[i]));
        sqq += uint(lv[i] * lv[i]);
      }
      for (int refit = 0; refit < 2; ++refit) {
        const float d = f16_round(refit == 1 ? (sqq > 0u ? dbl_div_int_to_float(sxq, sqq) : 0.0) : d0);
        const Dbl err = sq_error(d, lv);
        err_m[2 * tid + refit] = err.m;
        err_e[2 * tid + refit] = err.e;
        trial_d[2 * tid + refit] = d;
      }
    }
  }
  barrier();
  if (tid == 0) {
    int w = -1;
    Dbl best_err = dbl_zero();
    if (amax != 0.0)
      for (int j = 0; j < 2 * CANDIDATES; ++j) {
        if (!err_ok[j]) continue;
        const Dbl e = Dbl(err_m[j], err_e[j], false);
        if (w < 0 || dbl_less_nonneg(e, best_err)) {
          w = j;
          best_err = e;
        }
      }
    best = w;
  }
  barrier();
  const int w = best;
  const float d = w < 0 ? 0.0 : trial_d[w];
  if (tid < 32) {
    int q = 0;
    if (d != 0.0) {
      // The SDK re-chooses every level for the final scale.
      precise float v = div_rn(xs[tid], d);
      q = int(clamp(roundEven(v), float(QLO), float(QHI)));
    } else if (w >= 0) {
      // A zero scale keeps the winning candidate's levels.
      const float d0 = div_rn(mx, candidate_t(w >> 1));
      q = cand_level(xs[tid], div_rn(1.0, d0));
    }
    levels[tid] = q;
  }
  barrier();
  if (tid == 0) st_u16(blk, f16_bits(d));
#if defined(Q8_0)
  if (tid < 32) st_u8(blk + 2ul + uint64_t(tid), uint(levels[tid]) & 0xffu);
#else
  if (tid < 16) st_u8(blk + 2ul + uint64_t(tid), uint(levels[tid] + 8) | (uint(levels[tid + 16] + 8) << 4));
#endif
}
