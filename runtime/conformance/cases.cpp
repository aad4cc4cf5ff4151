#include "conformance/cases.hpp"

#include <algorithm>

#include "conformance/case_builder.hpp"

namespace sy::conformance {

std::string Case::name() const { return std::string(op_name(op)) + " " + types + " [" + shape + "]"; }

std::vector<StorageType> case_types(OpKind op) {
  using T = StorageType;
  switch (op) {
    case OpKind::matmul:
    case OpKind::matmul_id:
    case OpKind::get_rows:
      return {T::F32,  T::F16,    T::BF16, T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1,  T::Q8_0,
              T::IQ4_NL, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::IQ4_XS};
    case OpKind::set_rows:
    case OpKind::attention:
    case OpKind::copy: return {T::F32, T::F16, T::BF16, T::Q8_0, T::Q4_0};
    default: return {T::F32};
  }
}

std::vector<Case> make_cases(const CaseFilter& filter) {
  std::vector<Case> all;
  detail::add_matmul_cases(all);
  detail::add_elementwise_cases(all);
  detail::add_data_cases(all);
  detail::add_rope_cases(all);
  detail::add_cache_cases(all);
  detail::add_recurrent_cases(all);
  std::vector<Case> out;
  for (const OpKind op : all_ops()) {  // op order, whatever order the families add them in
    if (!filter.ops.empty() && std::find(filter.ops.begin(), filter.ops.end(), op) == filter.ops.end()) continue;
    for (auto& c : all) {
      if (c.op != op) continue;
      if (!filter.types.empty() && std::find(filter.types.begin(), filter.types.end(), c.type) == filter.types.end())
        continue;
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace sy::conformance
