// The scalar reference for interleaved layouts: un-interleave the group (quant.hpp's
// unpack_rows(), the inverse of the loader's repack) and run the row-major scalar kernel
// on each row. Tests compare the SIMD group kernels with it; dot_kernel() never offers it
// for running a model, since row-major weights are as fast on the scalar path.
#include <vector>

#include "dot.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

constexpr int kGroup = 16;

template <int T>
void group_scalar(StorageType type, int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  const StorageType base = interleave_base(type);
  const DotKernel row_kernel = dot_kernel_scalar(base);
  const size_t row = *storage_row_bytes(base, static_cast<uint64_t>(n));
  std::vector<uint8_t> rows(row * kGroup);
  (void)unpack_rows(type, w, rows.data(), n, kGroup);
  for (int t = 0; t < T; ++t)
    for (int r = 0; r < kGroup; ++r)
      out[t][r] = row_kernel.dot(n, rows.data() + row * r, static_cast<const uint8_t*>(a) + t * stride);
}

template <StorageType X, int T>
void group(int64_t n, const void* w, const void* a, size_t stride, float* const* out) {
  group_scalar<T>(X, n, w, a, stride, out);
}

template <StorageType X>
DotKernel kernel() {
  const DotKernel row = dot_kernel_scalar(interleave_base(X));
  DotKernel k{row.act_type, nullptr, row.quantize_act, Isa::scalar};
  k.act_bytes = row.act_bytes;  // I4_G*: the grouped activation layout (act_q8_0_gsums)
  k.group1 = group<X, 1>;
  k.group4 = group<X, 4>;
  return k;
}

}  // namespace

DotKernel dot_kernel_scalar_x16(StorageType w) {
  switch (w) {
    case StorageType::Q4_K_X16: return kernel<StorageType::Q4_K_X16>();
    case StorageType::Q6_K_X16: return kernel<StorageType::Q6_K_X16>();
    case StorageType::Q4_0_X16: return kernel<StorageType::Q4_0_X16>();
    case StorageType::Q8_0_X16: return kernel<StorageType::Q8_0_X16>();
    case StorageType::I4_G32_X16: return kernel<StorageType::I4_G32_X16>();
    case StorageType::I4_G64_X16: return kernel<StorageType::I4_G64_X16>();
    case StorageType::I4_G128_X16: return kernel<StorageType::I4_G128_X16>();
    default: return {};
  }
}

}  // namespace sy::cpu
