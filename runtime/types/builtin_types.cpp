#include "types/builtin_types.hpp"

#include <array>
#include <cstring>

#include "reference/blocks.hpp"
#include "reference/grouped.hpp"
#include "reference/quant_internal.hpp"
#include "switchyard/quant.hpp"

namespace sy::types {
namespace {

using T = StorageType;
using u8 = uint8_t;
using DeqBlock = void (*)(const u8*, float*);
using QuantBlock = void (*)(const float*, const float*, u8*);

// Row functions over a block function; n is a whole number of blocks (the registry checks).
template <DeqBlock F, int BS, int BB>
void deq_row(const void* src, float* dst, int64_t n) noexcept {
  const auto* b = static_cast<const u8*>(src);
  for (int64_t i = 0; i < n / BS; ++i) F(b + i * BB, dst + i * BS);
}
template <QuantBlock F, int BS, int BB>
void quant_row(const float* src, void* dst, int64_t n) noexcept {
  auto* b = static_cast<u8*>(dst);
  for (int64_t i = 0; i < n / BS; ++i) F(src + i * BS, nullptr, b + i * BB);
}
template <QuantBlock F, int BS, int BB>
void quant_row_weighted(const float* src, void* dst, int64_t n, const float* weights) noexcept {
  auto* b = static_cast<u8*>(dst);
  for (int64_t i = 0; i < n / BS; ++i) F(src + i * BS, weights + i * BS, b + i * BB);
}

uint16_t rd16(const u8* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
void f32_deq(const void* s, float* d, int64_t n) noexcept { std::memcpy(d, s, static_cast<size_t>(n) * 4); }
void f32_quant(const float* s, void* d, int64_t n) noexcept { std::memcpy(d, s, static_cast<size_t>(n) * 4); }
void f16_deq(const void* s, float* d, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) d[i] = fp16_to_fp32(rd16(static_cast<const u8*>(s) + 2 * i));
}
void f16_quant(const float* s, void* d, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) quant::put16(static_cast<u8*>(d) + 2 * i, fp32_to_fp16(s[i]));
}
void bf16_deq(const void* s, float* d, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) d[i] = bf16_to_fp32(rd16(static_cast<const u8*>(s) + 2 * i));
}
void bf16_quant(const float* s, void* d, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) quant::put16(static_cast<u8*>(d) + 2 * i, fp32_to_bf16(s[i]));
}
void e4m3_deq(const void* s, float* d, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) d[i] = ref::fp8_e4m3_to_fp32(static_cast<const u8*>(s)[i]);
}
void e5m2_deq(const void* s, float* d, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) d[i] = ref::fp8_e5m2_to_fp32(static_cast<const u8*>(s)[i]);
}
template <int G, int Bits>
void group_block(const u8* b, float* y) { ref::dequant_int_group(b, y, G, Bits); }
template <bool E5M2>
void fp8_block(const u8* b, float* y) { ref::dequant_fp8_block(b, y, E5M2); }

constexpr uint32_t Q = kStorageQuantized;

// A GGUF block type with reference functions both ways.
template <DeqBlock D, QuantBlock Qf, int BS, int BB>
constexpr StorageTypeDesc gguf_q(const char* name) {
  StorageTypeDesc d;
  d.name = name;
  d.block_size = BS;
  d.block_bytes = BB;
  d.flags = Q;
  d.dequantize_row = deq_row<D, BS, BB>;
  d.quantize_row = quant_row<Qf, BS, BB>;
  d.quantize_row_weighted = quant_row_weighted<Qf, BS, BB>;
  return d;
}
// A type the runtime knows the geometry of but has no reference conversion for.
constexpr StorageTypeDesc plain(const char* name, uint32_t bs, uint32_t bb, uint32_t flags, DequantizeRowFn deq = nullptr,
                                QuantizeRowFn quant = nullptr, uint32_t group = 0) {
  StorageTypeDesc d;
  d.name = name;
  d.block_size = bs;
  d.block_bytes = bb;
  d.flags = flags;
  d.group_size = group;
  d.dequantize_row = deq;
  d.quantize_row = quant;
  return d;
}
template <int G, int Bits>
constexpr StorageTypeDesc grouped(const char* name) {
  constexpr int bytes = 4 + G * Bits / 8;
  return plain(name, G, bytes, Q, deq_row<group_block<G, Bits>, G, bytes>, nullptr, G);
}

// Block layouts of the GGUF types follow ggml's block_* structs (ggml-common.h); the
// comment after an entry says where its byte count comes from.
const std::array kTable{
    BuiltinType{T::F32, "gguf", true, plain("F32", 1, 4, 0, f32_deq, f32_quant)},
    BuiltinType{T::F16, "gguf", true, plain("F16", 1, 2, 0, f16_deq, f16_quant)},
    BuiltinType{T::Q4_0, "gguf", true, gguf_q<ref::deq::q4_0, quant::q4_0, 32, 18>("Q4_0")},  // f16 d + 16 nibble bytes
    BuiltinType{T::Q4_1, "gguf", true, gguf_q<ref::deq::q4_1, quant::q4_1, 32, 20>("Q4_1")},  // f16 d, m + 16
    BuiltinType{T::Q5_0, "gguf", true, gguf_q<ref::deq::q5_0, quant::q5_0, 32, 22>("Q5_0")},  // f16 d + 4 high bits + 16
    BuiltinType{T::Q5_1, "gguf", true, gguf_q<ref::deq::q5_1, quant::q5_1, 32, 24>("Q5_1")},  // f16 d, m + 4 + 16
    BuiltinType{T::Q8_0, "gguf", true, gguf_q<ref::deq::q8_0, quant::q8_0, 32, 34>("Q8_0")},  // f16 d + 32
    BuiltinType{T::Q8_1, "gguf", true, gguf_q<ref::deq::q8_1, quant::q8_1, 32, 36>("Q8_1")},  // f16 d, s + 32
    BuiltinType{T::Q2_K, "gguf", true, gguf_q<ref::deq::q2_k, quant::q2_k, 256, 84>("Q2_K")},  // 16 scales + 64 + f16 d, dmin
    BuiltinType{T::Q3_K, "gguf", true, gguf_q<ref::deq::q3_k, quant::q3_k, 256, 110>("Q3_K")},  // 32 hmask + 64 + 12 scales + d
    BuiltinType{T::Q4_K, "gguf", true, gguf_q<ref::deq::q4_k, quant::q4_k, 256, 144>("Q4_K")},  // d, dmin + 12 scales + 128
    BuiltinType{T::Q5_K, "gguf", true, gguf_q<ref::deq::q5_k, quant::q5_k, 256, 176>("Q5_K")},  // d, dmin + 12 + 32 qh + 128
    BuiltinType{T::Q6_K, "gguf", true, gguf_q<ref::deq::q6_k, quant::q6_k, 256, 210>("Q6_K")},  // 128 ql + 64 qh + 16 scales + d
    BuiltinType{T::Q8_K, "gguf", true, gguf_q<ref::deq::q8_k, quant::q8_k, 256, 292>("Q8_K")},  // f32 d + 256 + 16 i16 bsums
    BuiltinType{T::IQ2_XXS, "gguf", true, plain("IQ2_XXS", 256, 66, Q)},
    BuiltinType{T::IQ2_XS, "gguf", true, plain("IQ2_XS", 256, 74, Q)},
    BuiltinType{T::IQ3_XXS, "gguf", true, plain("IQ3_XXS", 256, 98, Q)},
    BuiltinType{T::IQ1_S, "gguf", true, plain("IQ1_S", 256, 50, Q)},
    BuiltinType{T::IQ4_NL, "gguf", true, gguf_q<ref::deq::iq4_nl, quant::iq4_nl, 32, 18>("IQ4_NL")},
    BuiltinType{T::IQ3_S, "gguf", true, plain("IQ3_S", 256, 110, Q)},
    BuiltinType{T::IQ2_S, "gguf", true, plain("IQ2_S", 256, 82, Q)},
    BuiltinType{T::IQ4_XS, "gguf", true, gguf_q<ref::deq::iq4_xs, quant::iq4_xs, 256, 136>("IQ4_XS")},
    BuiltinType{T::I8, "gguf", true, plain("I8", 1, 1, 0)},
    BuiltinType{T::I16, "gguf", true, plain("I16", 1, 2, 0)},
    BuiltinType{T::I32, "gguf", true, plain("I32", 1, 4, 0)},
    BuiltinType{T::I64, "gguf", true, plain("I64", 1, 8, 0)},
    BuiltinType{T::F64, "gguf", true, plain("F64", 1, 8, 0)},
    BuiltinType{T::IQ1_M, "gguf", true, plain("IQ1_M", 256, 56, Q)},
    BuiltinType{T::BF16, "gguf", true, plain("BF16", 1, 2, 0, bf16_deq, bf16_quant)},
    BuiltinType{T::TQ1_0, "gguf", true, plain("TQ1_0", 256, 54, Q)},
    BuiltinType{T::TQ2_0, "gguf", true, plain("TQ2_0", 256, 66, Q)},
    BuiltinType{T::MXFP4, "gguf", true, plain("MXFP4", 32, 17, Q)},  // e8m0 scale + 16
    BuiltinType{T::FP8_E4M3, "core", false, plain("FP8_E4M3", 1, 1, 0, e4m3_deq)},
    BuiltinType{T::FP8_E5M2, "core", false, plain("FP8_E5M2", 1, 1, 0, e5m2_deq)},
    BuiltinType{T::FP8_E4M3_B128, "core", false, plain("FP8_E4M3_B128", 128, 132, Q, deq_row<fp8_block<false>, 128, 132>)},
    BuiltinType{T::FP8_E5M2_B128, "core", false, plain("FP8_E5M2_B128", 128, 132, Q, deq_row<fp8_block<true>, 128, 132>)},
    BuiltinType{T::I4_G32, "core", false, grouped<32, 4>("I4_G32")},  // f16 d, z + 16
    BuiltinType{T::I4_G64, "core", false, grouped<64, 4>("I4_G64")},  // f16 d, z + 32
    BuiltinType{T::I4_G128, "core", false, grouped<128, 4>("I4_G128")},  // f16 d, z + 64
    BuiltinType{T::I8_G32, "core", false, grouped<32, 8>("I8_G32")},
    BuiltinType{T::I8_G64, "core", false, grouped<64, 8>("I8_G64")},
    BuiltinType{T::I8_G128, "core", false, grouped<128, 8>("I8_G128")},
    // Interleaved rows: a row is not contiguous, so there is no row conversion; repack_rows
    // and unpack_rows (quant.hpp) convert whole row groups.
    BuiltinType{T::Q4_K_X16, "core", false, plain("Q4_K_X16", 256, 144, Q)},
    BuiltinType{T::Q4_0_X16, "core", false, plain("Q4_0_X16", 32, 18, Q)},
    BuiltinType{T::Q8_0_X16, "core", false, plain("Q8_0_X16", 32, 34, Q)},
    BuiltinType{T::I4_G32_X16, "core", false, plain("I4_G32_X16", 32, 20, Q, nullptr, nullptr, 32)},
    BuiltinType{T::I4_G64_X16, "core", false, plain("I4_G64_X16", 64, 36, Q, nullptr, nullptr, 64)},
    BuiltinType{T::I4_G128_X16, "core", false, plain("I4_G128_X16", 128, 68, Q, nullptr, nullptr, 128)},
    BuiltinType{T::Q6_K_X16, "core", false, plain("Q6_K_X16", 256, 210, Q)},
};

}  // namespace

std::span<const BuiltinType> builtin_types() noexcept { return kTable; }

}  // namespace sy::types
