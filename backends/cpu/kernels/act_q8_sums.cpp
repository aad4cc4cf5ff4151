// The activation conversions of act_q8_sums.hpp's layouts. They run once per activation
// row (decode converts one row per matmul), so scalar code is fast enough; every ISA's
// kernels read the same bytes.
#include "act_q8_sums.hpp"

#include "dot.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

// One Q8_0 block of x: its d as f32 (the f16 value Q8_0 stores), its levels and their sum.
float q8_block(const float* x, int8_t* levels, int& sum) {
  uint8_t q[34];
  act_q8_0(32, x, q);
  uint16_t dh;
  std::memcpy(&dh, q, 2);
  std::memcpy(levels, q + 2, 32);
  sum = 0;
  for (int i = 0; i < 32; ++i) sum += levels[i];
  return fp16_to_fp32(dh);
}

}  // namespace

size_t act_q8_0_sums_bytes(int64_t n) { return q8s::row_bytes(n); }

void act_q8_0_sums(int64_t n, const float* x, void* out) {
  auto* o = static_cast<uint8_t*>(out);
  for (int64_t b = 0; b < n / 32; ++b, o += q8s::kBlock) {
    int sum;
    const float d = q8_block(x + 32 * b, reinterpret_cast<int8_t*>(o + q8s::kLevels), sum);
    std::memcpy(o, &d, 4);
    std::memcpy(o + 4, &sum, 4);
  }
}

size_t act_q8_0_gsums_bytes(int64_t n) { return q8g::row_bytes(n); }

void act_q8_0_gsums(int64_t n, const float* x, void* out) {
  auto* o = static_cast<uint8_t*>(out);
  const int64_t nb = n / 32;
  uint8_t* scales = o + q8g::scales_offset(n);
  std::memset(scales, 0, 64 * q8g::pairs(n));  // a missing second block of the last pair
  const auto put = [&](int g, int64_t i, float v) { std::memcpy(o + q8g::group_sums_offset(n, g) + 4 * i, &v, 4); };
  const auto get = [&](int g, int64_t i) { return ld_f32(o + q8g::group_sums_offset(n, g) + 4 * i); };
  for (int64_t b = 0; b < nb; ++b) {
    int sum;
    const float d = q8_block(x + 32 * b, reinterpret_cast<int8_t*>(o + 32 * b), sum);
    for (int j = 0; j < 8; ++j) std::memcpy(scales + 32 * b + 4 * j, &d, 4);
    put(32, b, d * static_cast<float>(sum));
  }
  for (int64_t i = 0; i < n / 64; ++i) put(64, i, get(32, 2 * i) + get(32, 2 * i + 1));
  for (int64_t i = 0; i < n / 128; ++i) put(128, i, get(64, 2 * i) + get(64, 2 * i + 1));
}

}  // namespace sy::cpu
