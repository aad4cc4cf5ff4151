// The arithmetic of the CUDA q8 matmul path (backends/cuda/kernels/levels.hpp), compiled for
// the host and checked against the CPU's scalar reference (backends/cpu/kernels/dot_scalar.cpp)
// without a GPU: the activation levels the kernels' quantizers produce for the CPU's scales,
// and each weight block's term of the dot product. A legacy block's term must equal the
// CPU's bit for bit; a K-quant super-block, summed over its eight parts, within float rounding.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dot.hpp"
#include "kernels/levels.hpp"
#include "switchyard/quant.hpp"
#include "switchyard/storage.hpp"

namespace cuda_levels_test {

using sy::StorageType;
namespace cu = sy::cuda;

constexpr StorageType kLegacy[] = {StorageType::Q4_0, StorageType::Q4_1, StorageType::Q5_0,
                                   StorageType::Q5_1, StorageType::Q8_0, StorageType::IQ4_NL};
constexpr StorageType kKQuants[] = {StorageType::Q2_K, StorageType::Q3_K, StorageType::Q4_K,
                                    StorageType::Q5_K, StorageType::Q6_K, StorageType::IQ4_XS};

// Deterministic values of varied sign and magnitude (no generator state, no seed).
std::vector<float> values(int64_t n, float phase, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto x = static_cast<float>(i);
    v[static_cast<size_t>(i)] = scale * (std::sin(0.37f * x + phase) + 0.25f * std::cos(1.91f * x * x + phase));
  }
  return v;
}

std::vector<uint8_t> quantized(StorageType t, const std::vector<float>& x) {
  std::vector<uint8_t> out(*sy::storage_row_bytes(t, x.size()));
  REQUIRE(sy::quantize_row(t, x.data(), out.data(), static_cast<int64_t>(x.size())));
  return out;
}

// The weight rows: smooth values, plus a block of zeros (scale 0) in the middle.
std::vector<float> weights(int64_t n) {
  auto w = values(n, 0.5f, 1.0f);
  for (int64_t i = n / 2; i < n / 2 + 32; ++i) w[static_cast<size_t>(i)] = 0;
  return w;
}

float f32_at(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// The CPU's q8_0 block (f16 d, 32 levels) as the CUDA kernels keep it.
cu::Act32 act32(const uint8_t* b) {
  cu::Act32 a{};
  a.d = cu::h2f(b);
  for (int j = 0; j < 32; ++j) {
    const int q = static_cast<int8_t>(b[2 + j]);
    reinterpret_cast<int8_t*>(a.q)[j] = static_cast<int8_t>(q);
    a.qsum += q;
  }
  return a;
}

// The CPU's q8_K block (f32 d, 256 levels, 16 int16 sums) as the CUDA kernels keep it.
cu::ActK actk(const uint8_t* b) {
  cu::ActK a{};
  a.d = f32_at(b);
  std::memcpy(a.q, b + 4, 256);
  for (int g = 0; g < 16; ++g) {
    int16_t s;
    std::memcpy(&s, b + 260 + 2 * g, 2);
    a.bsum[g] = s;
  }
  return a;
}

template <uint32_t T>
float legacy_term(const uint8_t* w, const cu::Act32& a) {
  return cu::legacy_dot<T>(w, a);
}
float legacy_term(StorageType t, const uint8_t* w, const cu::Act32& a) {
  switch (t) {
    case StorageType::Q4_0: return legacy_term<cu::ty::Q4_0>(w, a);
    case StorageType::Q4_1: return legacy_term<cu::ty::Q4_1>(w, a);
    case StorageType::Q5_0: return legacy_term<cu::ty::Q5_0>(w, a);
    case StorageType::Q5_1: return legacy_term<cu::ty::Q5_1>(w, a);
    case StorageType::Q8_0: return legacy_term<cu::ty::Q8_0>(w, a);
    default: return legacy_term<cu::ty::IQ4_NL>(w, a);
  }
}

// The eight parts of a super-block, and the sum of their magnitudes (for the tolerance).
template <uint32_t T>
float kquant_term(const uint8_t* w, const cu::ActK& a, float& magnitude) {
  float s = 0;
  magnitude = 0;
  for (int p = 0; p < 8; ++p) {
    const float part = cu::kquant_dot<T>(w, p, a);
    s += part;
    magnitude += std::fabs(part);
  }
  return s;
}
float kquant_term(StorageType t, const uint8_t* w, const cu::ActK& a, float& magnitude) {
  switch (t) {
    case StorageType::Q2_K: return kquant_term<cu::ty::Q2_K>(w, a, magnitude);
    case StorageType::Q3_K: return kquant_term<cu::ty::Q3_K>(w, a, magnitude);
    case StorageType::Q4_K: return kquant_term<cu::ty::Q4_K>(w, a, magnitude);
    case StorageType::Q5_K: return kquant_term<cu::ty::Q5_K>(w, a, magnitude);
    case StorageType::Q6_K: return kquant_term<cu::ty::Q6_K>(w, a, magnitude);
    default: return kquant_term<cu::ty::IQ4_XS>(w, a, magnitude);
  }
}

}  // namespace cuda_levels_test

using namespace cuda_levels_test;

TEST_CASE("cuda q8 path: q8_0 levels are the CPU's, ties and NaN included", "[cuda][host]") {
  // Block 0: amax 127 makes d = 1, so x.5 values test the rounding (half away from zero, as
  // std::round). Block 1: smooth values. Block 2: a NaN (read as 0, not the block's max).
  // Block 3: zeros.
  std::vector<float> x(128, 0.f);
  const float ties[] = {127.f, 2.5f, -2.5f, 3.5f, -0.5f, 0.5f, 126.5f, -127.f};
  for (int j = 0; j < 32; ++j) x[static_cast<size_t>(j)] = ties[j % 8] * (j % 16 < 8 ? 1.f : -1.f);
  const auto smooth = values(32, 1.3f, 4.f);
  std::copy(smooth.begin(), smooth.end(), x.begin() + 32);
  std::copy(smooth.begin(), smooth.end(), x.begin() + 64);
  x[70] = std::numeric_limits<float>::quiet_NaN();

  std::vector<uint8_t> cpu(4 * 34);
  sy::cpu::act_q8_0(128, x.data(), cpu.data());
  for (int b = 0; b < 4; ++b) {
    const float* xb = x.data() + 32 * b;
    float amax = 0;
    for (int j = 0; j < 32; ++j)
      if (!std::isnan(xb[j])) amax = std::max(amax, std::fabs(xb[j]));
    const float d = amax / 127.f, id = d != 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) {
      INFO("block " << b << ", element " << j << ", x = " << xb[j]);
      CHECK(cu::q8_0_level(xb[j], id) == static_cast<int8_t>(cpu[static_cast<size_t>(34 * b + 2 + j)]));
    }
  }
}

TEST_CASE("cuda q8 path: q8_K levels are the SDK's, ties to even", "[cuda][host]") {
  // Block 0: the first element of largest magnitude is -127, so iscale = 1 and x.5 values
  // test round-half-to-even; a later +127 must not change the sign. Block 1: smooth values.
  std::vector<float> x(512);
  for (int i = 0; i < 256; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 7) - 3.5f + (i % 3 == 0 ? 0.f : 1.f);
  x[5] = -127.f;
  x[200] = 127.f;
  const auto smooth = values(256, 2.1f, 0.3f);
  std::copy(smooth.begin(), smooth.end(), x.begin() + 256);

  std::vector<uint8_t> cpu(2 * 292);
  REQUIRE(sy::quantize_row(StorageType::Q8_K, x.data(), cpu.data(), 512));
  for (int b = 0; b < 2; ++b) {
    const float* xb = x.data() + 256 * b;
    int first = 0;
    for (int i = 1; i < 256; ++i)
      if (std::fabs(xb[i]) > std::fabs(xb[first])) first = i;
    const float iscale = -127.f / xb[first];
    CHECK(f32_at(&cpu[static_cast<size_t>(292 * b)]) == 1 / iscale);
    for (int i = 0; i < 256; ++i) {
      INFO("block " << b << ", element " << i << ", x = " << xb[i]);
      CHECK(cu::q8_k_level(xb[i], iscale) == static_cast<int8_t>(cpu[static_cast<size_t>(292 * b + 4 + i)]));
    }
  }
}

TEST_CASE("cuda q8 path: each legacy block's term is the CPU's, bit for bit", "[cuda][host]") {
  constexpr int64_t n = 32 * 12;
  const auto w = weights(n);
  const auto x = values(n, 0.9f, 2.f);
  for (StorageType t : kLegacy) {
    INFO(sy::storage_type_info(t).name);
    const auto wq = quantized(t, w);
    const sy::cpu::DotKernel k = sy::cpu::dot_kernel_scalar(t);
    REQUIRE(k.act_type == StorageType::Q8_0);
    std::vector<uint8_t> a(*sy::storage_row_bytes(StorageType::Q8_0, n));
    k.quantize_act(n, x.data(), a.data());
    const int wb = cu::legacy_block_bytes(static_cast<uint32_t>(t));
    REQUIRE(static_cast<size_t>(wb) * (n / 32) == wq.size());
    for (int64_t b = 0; b < n / 32; ++b) {
      const uint8_t* wblock = wq.data() + b * wb;
      const uint8_t* ablock = a.data() + b * 34;
      INFO("block " << b);
      const float cpu = k.dot(32, wblock, ablock);
      // Both start from an accumulator of +0 (the CPU's `s`, the kernel's `acc`): a block
      // whose term is -0 (scale 0) adds as +0 in both.
      const float gpu = 0.f + legacy_term(t, wblock, act32(ablock));
      CHECK(std::memcmp(&cpu, &gpu, 4) == 0);
    }
  }
}

TEST_CASE("cuda q8 path: each K-quant super-block's term is the CPU's within rounding", "[cuda][host]") {
  constexpr int64_t n = 256 * 4;
  const auto w = weights(n);
  const auto x = values(n, 0.2f, 1.5f);
  for (StorageType t : kKQuants) {
    INFO(sy::storage_type_info(t).name);
    const auto wq = quantized(t, w);
    const sy::cpu::DotKernel k = sy::cpu::dot_kernel_scalar(t);
    REQUIRE(k.act_type == StorageType::Q8_K);
    std::vector<uint8_t> a(*sy::storage_row_bytes(StorageType::Q8_K, n));
    k.quantize_act(n, x.data(), a.data());
    const int wb = cu::kquant_block_bytes(static_cast<uint32_t>(t));
    REQUIRE(static_cast<size_t>(wb) * (n / 256) == wq.size());
    for (int64_t b = 0; b < n / 256; ++b) {
      const uint8_t* wblock = wq.data() + b * wb;
      const uint8_t* ablock = a.data() + b * 292;
      INFO("super-block " << b);
      const float cpu = k.dot(256, wblock, ablock);
      float magnitude = 0;
      const float gpu = kquant_term(t, wblock, actk(ablock), magnitude);
      // Eight part products and seven additions against the CPU's one product: a few
      // roundings of the parts' magnitude at most.
      CHECK(std::fabs(gpu - cpu) <= 8 * std::numeric_limits<float>::epsilon() * magnitude);
      CHECK(magnitude > 0);
    }
  }
}
