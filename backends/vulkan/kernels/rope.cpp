// rope (shaders/rope.comp): normal, neox and multi-section rotations of F32 heads of any
// strides, optionally with per-pair frequency factors, rotating the first n_dims of each
// head and copying the rest; y may be x. One invocation per pair or copied element.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernel.hpp"

namespace sy::vulkan {
namespace {

constexpr int64_t kWorkgroup = 64;           // rope.comp's local size

bool f32_layout(const GraphTensor& t) {
  if (t.type != StorageType::F32 || !strides_fit(t)) return false;
  if (t.elements() <= 0 || t.elements() > std::numeric_limits<int32_t>::max()) return false;
  return std::all_of(std::begin(t.nb), std::end(t.nb), [](int64_t b) { return b % 4 == 0; });
}

Support supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.src[0] < 0 || n.src[1] < 0 || n.dst < 0) return Support::no;
  const auto &x = src_of(n, t, 0), &pos = src_of(n, t, 1), &y = dst_of(n, t);
  if (!f32_layout(x) || !f32_layout(y) || !std::equal(std::begin(x.ne), std::end(x.ne), y.ne)) return Support::no;
  const int mode = n.i[0];
  const int64_t n_dims = n.i[1];
  if (mode < 0 || mode > 2 || n_dims <= 0 || n_dims % 2 != 0 || n_dims > x.ne[0]) return Support::no;
  if (!(n.f[0] > 0.0f) || !std::isfinite(n.f[0])) return Support::no;  // the base's log2 is taken
  // Positions are read densely: one per token, or [4][tokens] for multi.
  if (pos.type != StorageType::I32 || !is_contiguous(pos) || pos.elements() != x.ne[2] * (mode == 2 ? 4 : 1))
    return Support::no;
  if (mode == 2) {
    int64_t sum = 0;
    for (int s = 2; s < 6; ++s) {
      if (n.i[s] < 0) return Support::no;
      sum += n.i[s];
    }
    if (sum <= 0) return Support::no;
  }
  if (n.src[2] >= 0) {
    const auto& ff = src_of(n, t, 2);
    if (ff.type != StorageType::F32 || !is_contiguous(ff) || ff.elements() != n_dims / 2) return Support::no;
  }
  return Support::yes;
}

Launch plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  const auto& y = dst_of(n, t);
  const int64_t n_dims = n.i[1];
  const int64_t units = n_dims / 2 + (y.ne[0] - n_dims);  // pairs, then copied dimensions
  const int64_t groups = (units * y.rows() + kWorkgroup - 1) / kWorkgroup;
  Launch l = spread_groups("rope", groups);
  // log2 of the base in double here, so the shader's exp2 is the only rounding it adds.
  l.u[0] = std::bit_cast<uint32_t>(static_cast<float>(std::log2(static_cast<double>(n.f[0]))));
  l.u[1] = static_cast<uint32_t>(units);
  return l;
}

constexpr KernelDef kDefs[] = {{OpKind::rope, supports, plan, {}}};

}  // namespace

std::span<const KernelDef> rope_kernels() { return kDefs; }

}  // namespace sy::vulkan
