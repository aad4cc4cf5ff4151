// Row reductions over F32 rows of any strides (norm.cu): rms_norm, l2_norm, softmax. Only x:
// softmax with a mask (a second source) is left to another device.
#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

Support row_op(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 1)) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  return f32_layout(x) && f32_layout(y) && same_shape(x, y) && x.rows() <= 0x7fffffff ? Support::yes : Support::no;
}

template <RowOp Op>
int run(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_rows(Op, rec, host, s);
}

constexpr KernelDef kDefs[] = {
    {OpKind::rms_norm, row_op, run<RowOp::rms_norm>},
    {OpKind::l2_norm, row_op, run<RowOp::l2_norm>},
    {OpKind::softmax, row_op, run<RowOp::softmax>},
};

}  // namespace

std::span<const KernelDef> norm_kernels() { return kDefs; }

}  // namespace sy::cuda
