#version 450
// Causal depthwise conv1d with per-sequence state (the CPU's conv1d_causal per run of
// tokens sharing a state slot). Channels are independent, so one thread per channel walks
// the tokens in order, carrying the K-1 inputs before the current one; where the slot
// changes it writes that window back and loads the next slot's. The window sits at the top
// of a MAXK-sized array so every index is a constant once the loops unroll.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"

#define MAXK 8

layout(local_size_x = 64) in;

uint64_t state_at(int slot, int r, int c, int C) {
  return base(SRC2) + uint64_t(int64_t(slot) * nb(SRC2, 1)) + uint64_t(r * C + c) * 4ul;
}

void main() {
  const int c = int(gl_GlobalInvocationID.x);
  const int C = ne(SRC0, 0), T = ne(SRC0, 1);
  if (c >= C) return;
  const int K = ne(SRC1, 0), slots = ne(SRC2, 1), off = MAXK - K;
  float w[MAXK], win[MAXK - 1];
  [[unroll]] for (int k = 0; k < MAXK; ++k) w[k] = k >= off ? ld_f32(at(SRC1, k - off, c, 0, 0)) : 0.0;
  [[unroll]] for (int k = 0; k < MAXK - 1; ++k) win[k] = 0.0;
  int slot = -1;
  for (int t = 0; t < T; ++t) {
    const int s = ld_i32(at(SRC3, t, 0, 0, 0));
    if (t == 0 || s != slot) {
      if (slot >= 0 && slot < slots)
        [[unroll]] for (int k = 0; k < MAXK - 1; ++k)
          if (k >= off) st_f32(state_at(slot, k - off, c, C), win[k]);
      slot = s;
      // A slot the state lacks (the CPU refuses the node) starts from zeros and is not kept.
      const bool ok = slot >= 0 && slot < slots;
      [[unroll]] for (int k = 0; k < MAXK - 1; ++k)
        win[k] = ok && k >= off ? ld_f32(state_at(slot, k - off, c, C)) : 0.0;
    }
    const float x = ld_f32(at(SRC0, c, t, 0, 0));
    float y = 0.0;
    [[unroll]] for (int k = 0; k < MAXK - 1; ++k)
      if (k >= off) y += w[k] * win[k];
    y += w[MAXK - 1] * x;
    st_f32(at(DST, c, t, 0, 0), y);
    [[unroll]] for (int k = 0; k < MAXK - 2; ++k) win[k] = win[k + 1];
    win[MAXK - 2] = x;
  }
  if (slot >= 0 && slot < slots)
    [[unroll]] for (int k = 0; k < MAXK - 1; ++k)
      if (k >= off) st_f32(state_at(slot, k - off, c, C), win[k]);
}
