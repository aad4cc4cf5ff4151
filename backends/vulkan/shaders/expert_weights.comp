#version 450
// expert_weights: per token, the probabilities of its chosen experts, optionally divided
// by their sum (renormalised), then scaled. One invocation per token, summing in the
// CPU's order. An expert id outside the table (the CPU refuses it) gives weight 0 here
// and takes no part in the sum: a shader cannot fail a node.
//
// Slots: SRC0 probs F32 [experts, tokens], SRC1 ids I32 [used, tokens] (dense),
// DST F32 [used, tokens]. ip[0] renormalise; fp[0] scale (0 means 1).
#include "common.glsl"

#define WG 64
layout(local_size_x = WG) in;

void main() {
  const int tok = int((gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * WG + gl_LocalInvocationID.x);
  const int tokens = ne(DST, 1), used = ne(DST, 0), experts = ne(SRC0, 0);
  if (tok >= tokens) return;
  const uint64_t ids = base(SRC1) + uint64_t(tok) * uint64_t(used) * 4;
  float sum = 0.0;
  for (int j = 0; j < used; ++j) {
    const int e = ld_i32(ids + uint64_t(j) * 4);
    const float w = e >= 0 && e < experts ? ld_f32(at(SRC0, e, tok, 0, 0)) : 0.0;
    st_f32(at(DST, j, tok, 0, 0), w);
    sum += w;
  }
  const float f = (pc.node.ip[0] != 0 ? 1.0 / sum : 1.0) * (pc.node.fp[0] == 0.0 ? 1.0 : pc.node.fp[0]);
  for (int j = 0; j < used; ++j) {
    const uint64_t a = at(DST, j, tok, 0, 0);
    st_f32(a, ld_f32(a) * f);
  }
}
