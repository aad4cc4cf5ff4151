// Element-wise ops on F32 tensors of any layout (elementwise.cu): add and mul with b
// broadcasting where its size is 1, scale, the activations and swiglu.
#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

Support unary(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 1)) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  return f32_layout(x) && f32_layout(y) && same_shape(x, y) ? Support::yes : Support::no;
}

Support binary(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &a = src_of(n, t, 0), &b = src_of(n, t, 1), &y = dst_of(n, t);
  if (!f32_layout(a) || !f32_layout(b) || !f32_layout(y) || !same_shape(a, y)) return Support::no;
  for (int d = 0; d < 4; ++d)
    if (b.ne[d] != a.ne[d] && b.ne[d] != 1) return Support::no;
  return Support::yes;
}

Support swiglu(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &g = src_of(n, t, 0), &u = src_of(n, t, 1), &y = dst_of(n, t);
  return f32_layout(g) && f32_layout(u) && f32_layout(y) && same_shape(g, u) && same_shape(g, y) ? Support::yes
                                                                                                  : Support::no;
}

template <Unary F>
int run_unary(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_unary(F, rec, host, s);
}
int run_add(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_binary_add(rec, host, s); }
int run_mul(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_binary_mul(rec, host, s); }
int run_swiglu(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_swiglu(rec, host, s); }

constexpr KernelDef kDefs[] = {
    {OpKind::add, binary, run_add},
    {OpKind::mul, binary, run_mul},
    {OpKind::scale, unary, run_unary<Unary::scale>},
    {OpKind::silu, unary, run_unary<Unary::silu>},
    {OpKind::gelu, unary, run_unary<Unary::gelu>},
    {OpKind::sigmoid, unary, run_unary<Unary::sigmoid>},
    {OpKind::softplus, unary, run_unary<Unary::softplus>},
    {OpKind::swiglu, swiglu, run_swiglu},
};

}  // namespace

std::span<const KernelDef> elementwise_kernels() { return kDefs; }

}  // namespace sy::cuda
