// quantize_row: the table of block quantizers, plus the float types.
#include <string>

#include "quant_internal.hpp"

namespace sy {
namespace {

using BlockFn = void (*)(const float*, uint8_t*);

BlockFn block_fn(StorageType t) {
  switch (t) {
    case StorageType::Q4_0: return quant::q4_0;
    case StorageType::Q4_1: return quant::q4_1;
    case StorageType::Q5_0: return quant::q5_0;
    case StorageType::Q5_1: return quant::q5_1;
    case StorageType::Q8_0: return quant::q8_0;
    case StorageType::Q8_1: return quant::q8_1;
    case StorageType::Q2_K: return quant::q2_k;
    case StorageType::Q3_K: return quant::q3_k;
    case StorageType::Q4_K: return quant::q4_k;
    case StorageType::Q5_K: return quant::q5_k;
    case StorageType::Q6_K: return quant::q6_k;
    case StorageType::Q8_K: return quant::q8_k;
    case StorageType::IQ4_NL: return quant::iq4_nl;
    case StorageType::IQ4_XS: return quant::iq4_xs;
    default: return nullptr;
  }
}

}  // namespace

bool can_quantize(StorageType t) noexcept {
  return t == StorageType::F32 || t == StorageType::F16 || t == StorageType::BF16 || block_fn(t) != nullptr;
}

Status quantize_row(StorageType t, const float* src, void* dst, int64_t n) noexcept {
  const auto& info = storage_type_info(t);
  if (!can_quantize(t)) return error::unsupported("no quantizer for storage type " + std::string(info.name));
  if (n < 0 || n % info.block_size != 0)
    return error::invalid_argument(std::to_string(n) + " elements is not a whole number of " + std::string(info.name) +
                                   " blocks (" + std::to_string(info.block_size) + " elements each)");
  auto* b = static_cast<uint8_t*>(dst);
  switch (t) {
    case StorageType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return Status::ok();
    case StorageType::F16:
      for (int64_t i = 0; i < n; ++i) quant::put16(b + 2 * i, fp32_to_fp16(src[i]));
      return Status::ok();
    case StorageType::BF16:
      for (int64_t i = 0; i < n; ++i) quant::put16(b + 2 * i, fp32_to_bf16(src[i]));
      return Status::ok();
    default: break;
  }
  const BlockFn fn = block_fn(t);
  for (int64_t i = 0; i < n / info.block_size; ++i) fn(src + i * info.block_size, b + i * info.block_bytes);
  return Status::ok();
}

}  // namespace sy
