// Dot products of one weight row with one activation row, per weight storage type. Each
// weight type pairs with an activation type (its "dot type"): Q8_0 for the 32-element
// quants, Q8_K for the K-quants and IQ4_XS, F32 for float weights. Kernels exist per ISA;
// the scalar ones are the reference the others are tested against.
#pragma once

#include <cstdint>

#include "isa.hpp"
#include "switchyard/storage.hpp"
#include "switchyard/types.hpp"

namespace sy::cpu {

/// n elements (a multiple of the weight type's block size) of weight row w against the
/// activation row a, already converted to the dot type.
using DotFn = float (*)(int64_t n, const void* w, const void* a);
/// Converts n floats into the dot type.
using ActQuantFn = void (*)(int64_t n, const float* x, void* out);
/// One weight row against four activation rows `a_stride` bytes apart: the weight blocks
/// are unpacked once for all four (the prefill micro-kernel). out[r] = dot(w, a_r).
using Dot4Fn = void (*)(int64_t n, const void* w, const void* a, size_t a_stride, float out[4]);
/// Interleaved types (Q4_K_X16, ...): one group of 16 weight rows against T activation rows
/// `a_stride` bytes apart (T = 1 or 4, fixed per function); out[t][r] = dot(row r, a_t).
/// Row r of a group is computed alike for any T, so a token's result never depends on its batch.
using GroupFn = void (*)(int64_t n, const void* w, const void* a, size_t a_stride, float* const* out);
/// Bytes of an activation row of n elements in a kernel's own layout of its dot type.
using ActBytesFn = size_t (*)(int64_t n);
/// A registered type without a kernel of its own: n elements of weight row w (of `type`)
/// against f32 activations a.
using GenericDotFn = float (*)(const StorageTypeDesc* type, int64_t n, const void* w, const void* a);

struct DotKernel {
  StorageType act_type = StorageType::F32;  ///< the activation ("dot") type
  DotFn dot = nullptr;                       ///< nullptr: weight type not supported
  ActQuantFn quantize_act = nullptr;         ///< converts f32 activations to act_type
  Isa isa = Isa::scalar;                     ///< the ISA this kernel actually uses
  Dot4Fn dot4 = nullptr;                     ///< optional 4-row kernel; nullptr: call dot 4 times
  GroupFn group1 = nullptr;                  ///< interleaved types instead of dot: a group x 1 row
  GroupFn group4 = nullptr;                  ///< and a group x 4 rows
  /// The row size when quantize_act writes act_type's values in a layout of the kernel's
  /// own (Q8_0 with each block's sum); nullptr: act_type's row size.
  ActBytesFn act_bytes = nullptr;
  /// Instead of dot, for a registered type no kernel here knows: its functions and the
  /// generic kernel, which dequantizes a few blocks at a time and dots them in f32.
  const StorageTypeDesc* generic_type = nullptr;
  GenericDotFn generic = nullptr;

  /// Whether the weight type is supported at all (by rows, by groups or generically).
  [[nodiscard]] bool usable() const { return dot != nullptr || group1 != nullptr || generic != nullptr; }
};

/// One weight row against one activation row, through dot or the generic kernel.
inline float row_dot(const DotKernel& k, int64_t n, const void* w, const void* a) {
  return k.dot ? k.dot(n, w, a) : k.generic(k.generic_type, n, w, a);
}

/// Bytes of one activation row of n elements as `kern` converts it.
size_t act_row_bytes(const DotKernel& kern, int64_t n);

/// The kernel for a weight type on an ISA; falls back to a lower ISA's kernel where the
/// requested one has no specialised version (isa says which was used). An interleaved type
/// is offered only with a SIMD kernel of its own: it exists to be faster, and the loader
/// repacks weights only when the device supports it.
DotKernel dot_kernel(StorageType weight, Isa isa);

/// The generic kernel for a registered type with a reference dequantize_row and no kernel
/// of its own (what dot_kernel() falls back to): blocks of the row are dequantized into a
/// small buffer and dotted with isa's F32 kernel, so the weights stay in their own type in
/// memory. An empty DotKernel when the type cannot be dequantized.
DotKernel dot_kernel_generic(StorageType weight, Isa isa);

/// Plain activation conversions (shared by every ISA's kernels).
void act_f32(int64_t n, const float* x, void* out);
void act_bf16(int64_t n, const float* x, void* out);
void act_q8_0(int64_t n, const float* x, void* out);
void act_q8_k(int64_t n, const float* x, void* out);
/// Q8_0 in 40-byte blocks carrying each block's level sum (act_q8_sums.hpp), for kernels
/// that take an offset back through the sums (Q4_0_X16, Q8_0_X16).
void act_q8_0_sums(int64_t n, const float* x, void* out);
size_t act_q8_0_sums_bytes(int64_t n);
/// Q8_0 levels, block scales and f32 sums of d * sum per 32, 64 and 128 elements, in a
/// planar layout (act_q8_sums.hpp), for the grouped integer types (I4_G*, I8_G*): their
/// zero-point term is one load per group.
void act_q8_0_gsums(int64_t n, const float* x, void* out);
size_t act_q8_0_gsums_bytes(int64_t n);

/// The scalar reference kernels (for tests and as the fallback).
DotKernel dot_kernel_scalar(StorageType weight);
/// The scalar references of the interleaved types (reached through dot_kernel_scalar()).
DotKernel dot_kernel_scalar_x16(StorageType weight);
/// The scalar references of the grouped integer and FP8 block types (I4_G*, I8_G*,
/// FP8_*_B128); an empty DotKernel for other types.
DotKernel dot_kernel_scalar_grouped(StorageType weight);
#if defined(__x86_64__)
// The kernels of one ISA, for dispatch and tests. Asking is safe on any CPU (dot_tables.hpp);
// calling a kernel returned needs its ISA.
DotKernel dot_kernel_avx2(StorageType weight);
/// The AVX2 kernels built with AVX-VNNI (256-bit vpdpbusd/vpdpwssd): the same results as
/// dot_kernel_avx2()'s, bit for bit.
DotKernel dot_kernel_avx2vnni(StorageType weight);
DotKernel dot_kernel_avx512(StorageType weight);
/// Optional AVX-512 extensions the CPU has.
struct Avx512Ext {
  bool vnni = false;  ///< avx512vnni: vpdpbusd
  bool bf16 = false;  ///< avx512bf16: vdpbf16ps
};
/// The AVX-512 kernel, preferring a variant for an extension the CPU has: VNNI for the
/// integer types and the interleaved layouts (offered only there), BF16 for BF16 weights.
DotKernel dot_kernel_avx512_best(StorageType weight, Avx512Ext ext);
#endif

}  // namespace sy::cpu
