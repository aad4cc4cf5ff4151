#version 450
// fp8_qdq: dst = fp8_e4m3_qdq(x, s) (sdk/src/fp8.cpp) for F32 x and dst of one shape, any
// strides; s is the largest element of the scale tensors (sources 1.., f32, any strides),
// taken as std::max takes it (a NaN element is passed over). Each workgroup finds s itself
// (the scales are a handful of values), then runs its share of the elements: x / s rounded
// once (set_rows_exact.glsl's exact division), clamped to +-448, encoded to E4M3 and
// decoded (fp8.glsl), times s: bit for bit the CPU's. A scale that is not positive and
// finite (the CPU reports it) gives NaN.
#include "common.glsl"
#include "elementwise.glsl"
#include "set_rows_exact.glsl"
#include "fp8.glsl"

shared float part[256];

// Element j of tensor t's flattened shape.
float scale_at(int t, uint j) { return ld_f32(at4(t, unflatten(t, j))); }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  float s = 0.0;
  for (uint t = 1; t < pc.node.n_src; ++t)
    for (uint j = tid; j < elements(int(t) + 1); j += 256u) {
      const float v = scale_at(int(t) + 1, j);
      if (s < v) s = v;
    }
  part[tid] = s;
  barrier();
  for (uint h = 128u; h > 0u; h >>= 1) {
    if (tid < h && part[tid] < part[tid + h]) part[tid] = part[tid + h];
    barrier();
  }
  s = part[0];
  const bool ok = s > 0.0 && !isinf(s);
  FOR_EACH_ELEMENT(elements(DST), i) {
    const ivec4 c = unflatten(DST, i);
    const float v = div_any(ld_f32(at4(SRC0, c)), s);
    const float cl = isnan(v) ? v : min(max(v, -448.0), 448.0);
    precise const float y = e4m3_value(e4m3_code(cl)) * s;
    st_f32(at4(DST, c), ok ? y : uintBitsToFloat(0x7fc00000u));
  }
}
