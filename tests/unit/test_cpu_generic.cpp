// The CPU's generic kernel: registered types with no kernel of their own (a plugin's, or
// a built-in type such as FP8_E4M3) run from their own bytes, on every ISA, and match a
// float64 dot of the type's reference dequantization.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "kernel_sets.hpp"
#include "matmul.hpp"
#include "switchyard/quant.hpp"
#include "types/type_registry.hpp"

using namespace sy;
using namespace sy::cpu;

namespace {

// S8_B12: 12 elements per block, an f32 scale then 12 int8 codes (16 bytes); an odd block
// size, so the kernel's chunks end inside the buffer. L8_B1K: 1024 elements per block (one
// f32 scale, 1024 codes), larger than the kernel's buffer.
template <int B>
void s8_dequantize(const void* src, float* dst, int64_t n) noexcept {
  const auto* b = static_cast<const uint8_t*>(src);
  for (int64_t blk = 0; blk < n / B; ++blk, b += 4 + B) {
    float s;
    std::memcpy(&s, b, 4);
    for (int j = 0; j < B; ++j) dst[blk * B + j] = static_cast<float>(static_cast<int8_t>(b[4 + j])) * s;
  }
}

StorageType register_type(const char* name, int block) {
  static std::vector<StorageTypeDesc> descs = [] {
    StorageTypeDesc a, b;
    a.name = "S8_B12";
    a.block_size = 12;
    a.block_bytes = 16;
    a.dequantize_row = s8_dequantize<12>;
    b.name = "L8_B1K";
    b.block_size = 1024;
    b.block_bytes = 1028;
    b.dequantize_row = s8_dequantize<1024>;
    return std::vector{a, b};
  }();
  const StorageTypeTable table{sizeof(StorageTypeTable), static_cast<uint32_t>(descs.size()), descs.data()};
  REQUIRE(types::TypeRegistry::process().add("unit-generic", table, nullptr));
  const auto t = storage_type_from_name(std::string("unit-generic.") + name);
  REQUIRE(t.has_value());
  CHECK(storage_row_bytes(*t, static_cast<uint64_t>(block)) == static_cast<uint64_t>(4 + block));
  return *t;
}

std::vector<uint8_t> random_rows(int block, int64_t k, int64_t rows, std::mt19937& rng) {
  std::uniform_int_distribution<int> code(-127, 127);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  std::vector<uint8_t> w(static_cast<size_t>(rows * k / block * (4 + block)));
  for (size_t off = 0; off < w.size(); off += 4 + static_cast<size_t>(block)) {
    const float s = scale(rng);
    std::memcpy(w.data() + off, &s, 4);
    for (int j = 0; j < block; ++j) w[off + 4 + static_cast<size_t>(j)] = static_cast<uint8_t>(static_cast<int8_t>(code(rng)));
  }
  return w;
}

}  // namespace

TEMPLATE_TEST_CASE("generic kernel: a registered type without a kernel matches its float64 reference on every ISA", "[cpu][types]", SY_ISA_SETS) {
  SY_REQUIRE_SET(TestType);
  constexpr Isa isa = TestType::isa;
  ThreadPool pool(3);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto [name, block, k] : {std::tuple{"S8_B12", 12, int64_t{1200}}, std::tuple{"L8_B1K", 1024, int64_t{2048}}}) {
    const StorageType t = register_type(name, block);
    const int64_t rows = 21;
    const auto w = random_rows(block, k, rows, rng);
    const size_t row_bytes = *storage_row_bytes(t, static_cast<uint64_t>(k));
    for (int64_t m : {1, 4, 9}) {
      std::vector<float> x(static_cast<size_t>(m * k));
      for (auto& v : x) v = nd(rng);
      // The reference: the type's dequantizer, then a float64 dot.
      std::vector<double> ref(static_cast<size_t>(m * rows));
      std::vector<float> wr(static_cast<size_t>(k));
      for (int64_t r = 0; r < rows; ++r) {
        REQUIRE(dequantize_row(t, w.data() + r * row_bytes, wr.data(), k));
        for (int64_t i = 0; i < m; ++i) {
          double s = 0;
          for (int64_t j = 0; j < k; ++j) s += static_cast<double>(wr[static_cast<size_t>(j)]) * x[static_cast<size_t>(i * k + j)];
          ref[static_cast<size_t>(i * rows + r)] = s;
        }
      }
      INFO(name << " m=" << m << " isa=" << isa_name(isa));
      CHECK(dot_kernel(t, isa).generic != nullptr);
      std::vector<float> got(ref.size());
      MatmulArgs a{w.data(), t, k, rows, x.data(), m, got.data()};
      std::vector<uint8_t> scratch(matmul_scratch_bytes(t, k, m, isa));
      REQUIRE(matmul(a, isa, pool, scratch.data()).is_ok());
      // f32 products summed in f32 in chunks: a few ulps times sqrt(k) of the row's scale.
      for (size_t i = 0; i < ref.size(); ++i) CHECK(std::fabs(got[i] - ref[i]) <= 1e-5 * std::sqrt(static_cast<double>(k)));
    }
  }
}

TEST_CASE("generic kernel: a built-in type without a kernel of its own runs from its bytes", "[cpu][types]") {
  // FP8_E4M3 (one byte per element, scales kept apart): codes 0..63, values 0 to 1.875.
  // The grouped and FP8 block layouts have kernels of their own (test_cpu_grouped.cpp).
  const int64_t k = 64;
  std::vector<uint8_t> w(static_cast<size_t>(k));
  for (int j = 0; j < k; ++j) w[static_cast<size_t>(j)] = static_cast<uint8_t>(j);
  std::vector<float> row(static_cast<size_t>(k));
  REQUIRE(dequantize_row(StorageType::FP8_E4M3, w.data(), row.data(), k));
  CHECK(row[8] == 0x1p-6f);  // exponent 1, mantissa 0
  std::vector<float> x(static_cast<size_t>(k), 1.0f), y(1);
  ThreadPool pool(1);
  for (Isa isa : {Isa::scalar, detect_isa()}) {
    CHECK(dot_kernel(StorageType::FP8_E4M3, isa).generic != nullptr);
    CHECK(dot_kernel(StorageType::I4_G32, isa).dot != nullptr);
    MatmulArgs a{w.data(), StorageType::FP8_E4M3, k, 1, x.data(), 1, y.data()};
    std::vector<uint8_t> scratch(matmul_scratch_bytes(StorageType::FP8_E4M3, k, 1, isa));
    REQUIRE(matmul(a, isa, pool, scratch.data()).is_ok());
    double s = 0;
    for (float v : row) s += v;
    CHECK(y[0] == Approx(s));
  }
}
