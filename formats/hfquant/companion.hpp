// Reading the tensors of one quantized linear (qweight, qzeros, scales, g_idx, weight_scale...)
// with their checks: each refusal names the tensor, what was expected and the fix.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "quant_scheme.hpp"

namespace sy::hfq {

using hf::Dtype;
using hf::FoundTensor;
using hf::TensorFinder;

/// Whether a tensor name ends with `suffix` (and is longer than it): how schemes tell a
/// module's tensors apart.
inline bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// `module.suffix`, which the module's decoding needs; an error saying what is missing.
Result<FoundTensor> need(const TensorFinder& f, const std::string& module, const std::string& suffix,
                         const std::string& method);
/// `module.suffix` when present (tensor == nullptr otherwise).
FoundTensor maybe(const TensorFinder& f, const std::string& module, const std::string& suffix);

/// The tensor's dtype is one of `allowed`.
Status expect_dtype(const FoundTensor& t, std::initializer_list<Dtype> allowed);
/// The tensor's shape is `shape`; `why` says where the expected numbers come from.
Status expect_shape(const FoundTensor& t, const std::vector<int64_t>& shape, const std::string& why);

/// Element i, little-endian, of an I32 tensor.
inline int32_t i32_at(const FoundTensor& t, uint64_t i) noexcept {
  int32_t v;
  std::memcpy(&v, t.data.data() + i * 4, 4);
  return v;
}
/// Element i of an F32, F16 or BF16 tensor, exactly.
float float_at(const FoundTensor& t, uint64_t i) noexcept;
/// The elements of a tensor's shape multiplied.
uint64_t elements(const FoundTensor& t) noexcept;
/// "[4096, 512]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace sy::hfq
