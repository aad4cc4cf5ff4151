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

}  // namespace sy
