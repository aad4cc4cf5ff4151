// Row reductions: rms_norm, l2_norm and softmax over F32 rows of any strides, one
// workgroup per row (shaders/norm.comp, softmax.comp). Each op has a subgroup-reduction
// def, asked first and taken only where the device has subgroup arithmetic and no
// portable-only override, and the portable def with shared-memory tree reductions.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernel.hpp"

namespace sy::vulkan {
namespace {


bool sizes_fit(const GraphTensor& t) {
  return t.elements() > 0 && t.elements() <= std::numeric_limits<int32_t>::max();
}

// Whole f32 elements at 4-byte-aligned strides (the shader loads them as aligned floats).
bool f32_layout(const GraphTensor& t) {
  if (t.type != StorageType::F32 || !strides_fit(t) || !sizes_fit(t)) return false;
  return std::all_of(std::begin(t.nb), std::end(t.nb), [](int64_t b) { return b % 4 == 0; });
}

bool same_shape(const GraphTensor& a, const GraphTensor& b) { return std::equal(std::begin(a.ne), std::end(a.ne), b.ne); }

// One workgroup per row.
Launch per_row(std::string_view shader, int64_t rows) { return spread_groups(shader, rows); }

Support row_op(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  // Only x: a second source (a mask, say) is something these shaders do not apply.
  if (n.src[0] < 0 || n.src[1] >= 0 || n.dst < 0) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  return f32_layout(x) && f32_layout(y) && same_shape(x, y) ? Support::yes : Support::no;
}

bool subgroups(const Features& f) { return f.subgroup_arithmetic && !f.portable_only; }

Support row_op_subgroup(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  return subgroups(f) ? row_op(n, t, f) : Support::no;
}

Launch norm(std::string_view shader, const GraphNode& n, std::span<const GraphTensor> t) {
  Launch l = per_row(shader, src_of(n, t, 0).rows());
  l.u[0] = n.op == OpKind::l2_norm ? 1 : 0;
  return l;
}

Launch plan_norm(const GraphNode& n, std::span<const GraphTensor> t, const Features&) { return norm("norm", n, t); }
Launch plan_norm_subgroup(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return norm("norm_subgroup", n, t);
}
Launch plan_softmax(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return per_row("softmax", src_of(n, t, 0).rows());
}
Launch plan_softmax_subgroup(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return per_row("softmax_subgroup", src_of(n, t, 0).rows());
}

constexpr KernelDef kDefs[] = {
    {OpKind::rms_norm, row_op_subgroup, plan_norm_subgroup, "rms_norm: subgroup"},
    {OpKind::rms_norm, row_op, plan_norm, {}},
    {OpKind::l2_norm, row_op_subgroup, plan_norm_subgroup, "l2_norm: subgroup"},
    {OpKind::l2_norm, row_op, plan_norm, {}},
    {OpKind::softmax, row_op_subgroup, plan_softmax_subgroup, "softmax: subgroup"},
    {OpKind::softmax, row_op, plan_softmax, {}},
};

}  // namespace

std::span<const KernelDef> norm_kernels() { return kDefs; }

}  // namespace sy::vulkan
