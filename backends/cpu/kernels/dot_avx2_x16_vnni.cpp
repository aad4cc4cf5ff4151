// dot_avx2_x16.cpp built once more with AVX-VNNI: the same kernels with each integer
// multiply-add one VNNI instruction, exported as the unit's table with the Vnni suffix
// (simd_avx2.hpp).
#include "dot_avx2_x16.cpp"
