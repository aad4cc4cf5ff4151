// AWQ and GPTQ linears, once unpacked, are the same thing: integer codes with a zero point
// and a scale per group of input columns, W[n, k] = (q - z) * s. They become the core types
// I4_G32/64/128 (codes of up to 4 bits) or I8_G32/64/128, exactly: codes and zero points are
// small integers and the f16 scales are kept as they are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quant_scheme.hpp"

namespace sy::hfq {

struct IntLinear {
  int bits = 4;
  int64_t rows = 0, cols = 0;  ///< output and input features
  int64_t group = 0;           ///< consecutive input columns sharing a scale (divides cols)
  std::vector<uint8_t> codes;  ///< [rows][cols]
  std::vector<uint16_t> zeros; ///< [rows][cols / group], the effective zero point
  std::vector<uint16_t> scales;///< [rows][cols / group], f16 bits
};

/// The core group size a checkpoint's group maps to: the largest of 128, 64, 32 dividing it.
/// 0 when none does.
int64_t core_group(int64_t group) noexcept;

/// The linear in I4_G* (bits <= 4) or I8_G* (bits 5..8). `module` names it in errors.
Result<hf::DecodedLinear> to_int_groups(const IntLinear& q, const std::string& module);

}  // namespace sy::hfq
