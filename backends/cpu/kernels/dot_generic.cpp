// The generic kernel: any registered type with a reference dequantize_row runs here without
// a copy of its weights in another type. A few blocks of the row at a time are dequantized
// into a buffer on the stack and dotted with the ISA's F32 kernel, so the memory traffic is
// the type's own bytes; the cost is the reference dequantizer's speed.
#include <algorithm>
#include <vector>

#include "dot.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

constexpr int64_t kChunk = 512;  // floats per buffer: 2 KiB, in L1 beside the activations

DotFn f32_dot(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::avx512) return dot_kernel_avx512(StorageType::F32).dot;
  if (isa == Isa::avx2) return dot_kernel_avx2(StorageType::F32).dot;
#endif
  (void)isa;
  return dot_kernel_scalar(StorageType::F32).dot;
}

template <Isa I>
float generic_dot(const StorageTypeDesc* t, int64_t n, const void* w, const void* a) {
  static const DotFn dot = f32_dot(I);
  const int64_t bs = t->block_size;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* x = static_cast<const float*>(a);
  if (bs > kChunk) {  // a type with huge blocks: one block at a time, from the heap
    std::vector<float> buf(static_cast<size_t>(bs));
    float sum = 0.0f;
    for (int64_t off = 0; off < n; off += bs, wb += t->block_bytes) {
      t->dequantize_row(wb, buf.data(), bs);
      sum += dot(bs, buf.data(), x + off);
    }
    return sum;
  }
  alignas(64) float buf[kChunk];
  const int64_t per = kChunk / bs * bs;
  const size_t per_bytes = static_cast<size_t>(per / bs) * t->block_bytes;
  float sum = 0.0f;
  for (int64_t off = 0; off < n; off += per, wb += per_bytes) {
    const int64_t len = std::min(per, n - off);
    t->dequantize_row(wb, buf, len);
    sum += dot(len, buf, x + off);
  }
  return sum;
}

}  // namespace

DotKernel dot_kernel_generic(StorageType weight, Isa isa) {
  const StorageTypeDesc* t = storage_type_desc(weight);
  if (!t || !t->dequantize_row || interleave_rows(weight) != 1) return {};
  DotKernel k;
  k.act_type = StorageType::F32;
  k.quantize_act = act_f32;
  k.generic_type = t;
#if defined(__x86_64__)
  if (isa == Isa::avx512) {
    k.generic = generic_dot<Isa::avx512>;
  } else if (isa == Isa::avx2) {
    k.generic = generic_dot<Isa::avx2>;
  } else {
    k.generic = generic_dot<Isa::scalar>;
  }
  k.isa = isa;
#else
  k.generic = generic_dot<Isa::scalar>;
#endif
  return k;
}

}  // namespace sy::cpu
