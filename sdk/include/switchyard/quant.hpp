// Reference (scalar) conversions between storage types and f32. These define what each
// type means: fast kernels in the backends are tested against them, and `inspect --dump`
// and load-time conversions use them. Bit layouts are GGUF's.
#pragma once

#include <cstdint>

#include "switchyard/status.hpp"
#include "switchyard/storage.hpp"

namespace sy {

/// IEEE half -> float, exact (subnormals, infinities and NaN included).
float fp16_to_fp32(uint16_t h) noexcept;
/// float -> IEEE half, round to nearest even; overflow gives infinity.
uint16_t fp32_to_fp16(float f) noexcept;
/// bfloat16 -> float, exact.
float bf16_to_fp32(uint16_t h) noexcept;
/// float -> bfloat16, round to nearest even (NaN stays NaN).
uint16_t fp32_to_bf16(float f) noexcept;

/// float8_e4m3fn code -> float, exact: sign, 4 exponent bits (bias 7), 3 mantissa bits,
/// subnormals below 2^-6, no infinities; 0x7F and 0xFF are NaN, the largest value is 448.
float fp8_e4m3_decode(uint8_t code) noexcept;
/// float -> float8_e4m3fn, round to nearest even, saturating: finite values beyond +-448
/// and infinities give +-448; NaN gives the NaN code of its sign (0x7F or 0xFF); -0 stays -0.
uint8_t fp8_e4m3_encode(float x) noexcept;
/// A static FP8 activation scale applied to x (vLLM's quantize of the activation, then the
/// dequantize its FP8 GEMM folds into the output): decode(encode(clamp(x / s, -448, 448))) * s,
/// in float32. NaN stays NaN.
float fp8_e4m3_qdq(float x, float s) noexcept;

/// True when dequantize_row() supports `type`.
bool can_dequantize(StorageType type) noexcept;

/// Converts `n` elements of `type` starting at `src` into `dst`. `n` must be a multiple of
/// the type's block size. Errors: unsupported type, bad n.
Status dequantize_row(StorageType type, const void* src, float* dst, int64_t n) noexcept;

/// True when quantize_row() supports `type`.
bool can_quantize(StorageType type) noexcept;

/// Converts `n` floats into `type` at `dst` (storage_row_bytes(type, n) bytes). `n` must
/// be a multiple of the block size. Quantizers minimise the squared error of each block:
/// never worse than llama.cpp's reference recipe, which is always one of the candidates.
Status quantize_row(StorageType type, const float* src, void* dst, int64_t n) noexcept;

/// True when quantize_row_weighted() supports `type`.
bool can_quantize_weighted(StorageType type) noexcept;

/// As quantize_row(), minimising the squared error weighted per element: `weights` holds n
/// values >= 0 (a column's importance, from `switchyard imatrix`). Equal weights give
/// quantize_row()'s result. Errors: unsupported type, bad n.
Status quantize_row_weighted(StorageType type, const float* src, void* dst, int64_t n, const float* weights) noexcept;

/// Rows per group of an interleaved layout (16 for the _X16 types); 1 for a row-major type.
int interleave_rows(StorageType type) noexcept;

/// The row-major type an interleaved layout rearranges (Q4_K for Q4_K_X16), else `type`.
StorageType interleave_base(StorageType type) noexcept;

/// The interleaved layout of a row-major type (Q4_K_X16 for Q4_K, Q6_K_X16, Q4_0_X16,
/// Q8_0_X16, I4_G32_X16 ... I4_G128_X16), else `base` itself.
StorageType interleaved_of(StorageType base) noexcept;

/// Rearranges `rows` rows of `n` elements of interleave_base(to) at `src` into the
/// interleaved layout `to` at `dst` (the same number of bytes). `rows` must be a multiple
/// of interleave_rows(to). Group g (rows 16g..16g+15) starts at byte 16g times the row size;
/// in it, block column s holds block s of each of the 16 rows (16 times the block's bytes):
/// first the rows' leading f16 fields, each as an array of 16 halves (Q4_K: d, then dmin;
/// Q4_0, Q8_0 and Q6_K: d; I4_G*: d, then z), then the rest of the block as 4-byte words, word w of the 16 rows
/// together as 64 bytes in row order (so one 512-bit load feeds 16 rows to four-byte
/// dot-product lanes). Q4_K: a 2304-byte column, 3 scale words then 32 quant words (word
/// 8p + c is quant bytes 32p + 4c .. 32p + 4c + 3); Q6_K: 3360 bytes, its 210-byte block
/// less d as 52 words in block order (32 of ql, 16 of qh, 4 of scales); Q4_0: 288 bytes, 4
/// quant words; Q8_0: 544 bytes, 8 quant words; I4_G32/G64/G128: 320, 576, 1088 bytes, G/8
/// code words (word c holds elements 4c..4c+3 in its low nibbles and G/2 + 4c.. in its high ones).
Status repack_rows(StorageType to, const void* src, void* dst, int64_t n, int64_t rows) noexcept;

/// The inverse of repack_rows(): `rows` row-major rows of interleave_base(from) at `dst`.
Status unpack_rows(StorageType from, const void* src, void* dst, int64_t n, int64_t rows) noexcept;

}  // namespace sy
