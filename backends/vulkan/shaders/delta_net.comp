#version 450
// Gated delta-net recurrence (the CPU's delta_net per run of tokens sharing a state slot):
// per value head h and token, S *= exp(g); S += k (beta (v - S^T k))^T; out = S^T q, with
// key head h % key heads. Each column j of a head's d_k x d_v state evolves on its own, so
// one thread keeps column j in registers (MAXDK >= d_k, set per variant) and walks the
// tokens; the workgroup shares each token's k and q. Columns over x, value heads over y.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define WG 64

layout(local_size_x = WG) in;

shared float ks[MAXDK], qs[MAXDK];

uint64_t col_at(int slot, int h, int i, int j, int dk, int dv) {
  return base(SRC5) + uint64_t(int64_t(slot) * nb(SRC5, 1)) + uint64_t(int64_t(h * dk + i) * dv + j) * 4ul;
}

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int j = int(gl_WorkGroupID.x) * WG + tid, h = int(gl_WorkGroupID.y);
  const int dk = ne(SRC0, 0), hk = ne(SRC0, 1), T = ne(SRC0, 2);
  const int dv = ne(SRC2, 0), slots = ne(SRC5, 1), kh = h % hk;
  const bool col = j < dv;
  float S[MAXDK];
  [[unroll]] for (int i = 0; i < MAXDK; ++i) S[i] = 0.0;
  int slot = -1;
  for (int t = 0; t < T; ++t) {
    const int s = ld_i32(at(SRC6, t, 0, 0, 0));
    if (t == 0 || s != slot) {
      if (col && slot >= 0 && slot < slots)
        [[unroll]] for (int i = 0; i < MAXDK; ++i)
          if (i < dk) st_f32(col_at(slot, h, i, j, dk, dv), S[i]);
      slot = s;
      // A slot the state lacks (the CPU refuses the node) starts from zeros and is not kept.
      const bool ok = col && slot >= 0 && slot < slots;
      [[unroll]] for (int i = 0; i < MAXDK; ++i) S[i] = ok && i < dk ? ld_f32(col_at(slot, h, i, j, dk, dv)) : 0.0;
    }
    barrier();  // the previous token's readers of ks and qs are done
    for (int i = tid; i < dk; i += WG) {
      ks[i] = ld_f32(at(SRC1, i, kh, t, 0));
      qs[i] = ld_f32(at(SRC0, i, kh, t, 0));
    }
    barrier();
    if (col) {
      const float decay = exp(ld_f32(at(SRC3, h, t, 0, 0)));
      const float beta = ld_f32(at(SRC4, h, t, 0, 0));
      float sk = 0.0;
      [[unroll]] for (int i = 0; i < MAXDK; ++i)
        if (i < dk) {
          S[i] *= decay;
          sk += S[i] * ks[i];
        }
      const float kv = beta * (ld_f32(at(SRC2, j, h, t, 0)) - sk);
      float o = 0.0;
      [[unroll]] for (int i = 0; i < MAXDK; ++i)
        if (i < dk) {
          S[i] += ks[i] * kv;
          o += S[i] * qs[i];
        }
      st_f32(at(DST, j, h, t, 0), o);
    }
  }
  if (col && slot >= 0 && slot < slots)
    [[unroll]] for (int i = 0; i < MAXDK; ++i)
      if (i < dk) st_f32(col_at(slot, h, i, j, dk, dv), S[i]);
}
