// Shared by the elementwise shaders: a grid-stride loop over every element of a tensor,
// handing the body its 4-D index (innermost first), so any strides work through at().
layout(local_size_x = 256) in;

// Element i of a tensor of tensor t's shape, as (i0, i1, i2, i3).
ivec4 unflatten(int t, uint i) {
  const uint n0 = uint(ne(t, 0)), n1 = uint(ne(t, 1)), n2 = uint(ne(t, 2));
  const uint r = i / n0;
  return ivec4(int(i % n0), int(r % n1), int((r / n1) % n2), int(r / (n1 * n2)));
}

uint elements(int t) { return uint(ne(t, 0)) * uint(ne(t, 1)) * uint(ne(t, 2)) * uint(ne(t, 3)); }

uint64_t at4(int t, ivec4 i) { return at(t, i.x, i.y, i.z, i.w); }

#define FOR_EACH_ELEMENT(total, i)                                                             \
  for (uint i = gl_GlobalInvocationID.x; i < (total); i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)

float sigmoid_f(float x) { return 1.0 / (1.0 + exp(-x)); }
float silu_f(float x) { return x / (1.0 + exp(-x)); }
