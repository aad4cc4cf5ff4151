#version 450
// y = f(x) for F32 tensors of one shape, any strides. OP picks f (elementwise.list).
#include "common.glsl"
#include "elementwise.glsl"

#define OP_SILU 1
#define OP_GELU 2
#define OP_SIGMOID 3
#define OP_SOFTPLUS 4
#define OP_SCALE 5

// log(1 + u) without losing a small u to the rounding of 1 + u (GLSL has no log1p).
float log1p_f(float u) {
  const float w = 1.0 + u;
  return w == 1.0 ? u : log(w) * (u / (w - 1.0));
}

float f(float x) {
#if OP == OP_SILU
  return silu_f(x);
#elif OP == OP_GELU
  // The tanh approximation, as the CPU backend (and GGML_OP_GELU), written as
  // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)): no cancellation in 1 + tanh(u) for negative x,
  // and no tanh of a large argument (inf / inf in some drivers).
  const float k = 0.7978845608028654;
  return x / (1.0 + exp(-2.0 * k * (x + 0.044715 * x * x * x)));
#elif OP == OP_SIGMOID
  return sigmoid_f(x);
#elif OP == OP_SOFTPLUS
  return x > 20.0 ? x : log1p_f(exp(x));
#elif OP == OP_SCALE
  return x * pc.node.fp[0];
#else
#error "OP must name a unary op"
#endif
}

void main() {
  FOR_EACH_ELEMENT(elements(DST), i) {
    const ivec4 c = unflatten(DST, i);
    st_f32(at4(DST, c), f(ld_f32(at4(SRC0, c))));
  }
}
