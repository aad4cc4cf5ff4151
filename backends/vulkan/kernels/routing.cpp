// Expert routing and its neighbours: top_k and argsort (one bitonic sort per row in
// shared memory, shaders/sort.comp), expert_weights, moe_combine and concat. F32 values
// of any strides; index tensors (ids in, top_k/argsort out) are dense I32, as the CPU
// reference reads and writes them.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "kernel.hpp"

namespace sy::vulkan {
namespace {

constexpr int64_t kMaxSortRow = 1024;        // sort.comp's MAX_N (shared memory it sorts in)
constexpr int64_t kWorkgroup = 64;           // local size of the one-invocation-per-item shaders

bool sizes_fit(const GraphTensor& t) {
  return t.elements() > 0 && t.elements() <= std::numeric_limits<int32_t>::max();
}

bool f32_layout(const GraphTensor& t) {
  if (t.type != StorageType::F32 || !strides_fit(t) || !sizes_fit(t)) return false;
  return std::all_of(std::begin(t.nb), std::end(t.nb), [](int64_t b) { return b % 4 == 0; });
}

bool dense_i32(const GraphTensor& t) { return t.type == StorageType::I32 && is_contiguous(t) && sizes_fit(t); }

bool sources(const GraphNode& n, int count) {
  if (n.dst < 0) return false;
  for (int s = 0; s < kMaxSources; ++s)
    if ((n.src[s] >= 0) != (s < count)) return false;
  return true;
}

Launch spread(std::string_view shader, int64_t groups) { return spread_groups(shader, groups); }

Launch per_item(std::string_view shader, int64_t items) { return spread(shader, (items + kWorkgroup - 1) / kWorkgroup); }

// top_k and argsort: how many indices each row keeps (k, or the row length).
int64_t kept(const GraphNode& n, const GraphTensor& x) { return n.op == OpKind::top_k ? n.i[0] : x.ne[0]; }

Support sort_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources(n, 1)) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  if (!f32_layout(x) || x.ne[0] > kMaxSortRow || !dense_i32(y)) return Support::no;
  const int64_t k = kept(n, x);
  return k >= 1 && k <= x.ne[0] && y.ne[0] == k && y.rows() == x.rows() ? Support::yes : Support::no;
}

Launch sort_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  const auto& x = src_of(n, t, 0);
  Launch l = spread("sort", x.rows());
  l.u[0] = static_cast<uint32_t>(std::bit_ceil(static_cast<uint64_t>(x.ne[0])));
  l.u[1] = static_cast<uint32_t>(kept(n, x));
  return l;
}

Support weights_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources(n, 2)) return Support::no;
  const auto &p = src_of(n, t, 0), &ids = src_of(n, t, 1), &w = dst_of(n, t);
  if (!f32_layout(p) || !dense_i32(ids) || !f32_layout(w)) return Support::no;
  const bool two_d = p.ne[2] * p.ne[3] == 1 && ids.ne[2] * ids.ne[3] == 1 && w.ne[2] * w.ne[3] == 1;
  return two_d && ids.ne[1] == p.ne[1] && w.ne[0] == ids.ne[0] && w.ne[1] == ids.ne[1] ? Support::yes : Support::no;
}

Launch weights_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return per_item("expert_weights", dst_of(n, t).ne[1]);
}

Support combine_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources(n, 2)) return Support::no;
  const auto &y = src_of(n, t, 0), &w = src_of(n, t, 1), &o = dst_of(n, t);
  if (!f32_layout(y) || !f32_layout(w) || !f32_layout(o)) return Support::no;
  const bool shapes = y.ne[3] == 1 && w.ne[2] * w.ne[3] == 1 && o.ne[2] * o.ne[3] == 1 && w.ne[0] == y.ne[1] &&
                      w.ne[1] == y.ne[2] && o.ne[0] == y.ne[0] && o.ne[1] == y.ne[2];
  return shapes ? Support::yes : Support::no;
}

Launch combine_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return per_item("moe_combine", dst_of(n, t).elements());
}

Support concat_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources(n, 2)) return Support::no;
  const auto &a = src_of(n, t, 0), &b = src_of(n, t, 1), &y = dst_of(n, t);
  const int dim = n.i[0];
  if (!f32_layout(a) || !f32_layout(b) || !f32_layout(y) || dim < 0 || dim > 3) return Support::no;
  for (int d = 0; d < 4; ++d) {
    const int64_t want = d == dim ? a.ne[d] + b.ne[d] : a.ne[d];
    if ((d != dim && b.ne[d] != a.ne[d]) || y.ne[d] != want) return Support::no;
  }
  return Support::yes;
}

Launch concat_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return per_item("concat", dst_of(n, t).elements());
}

constexpr KernelDef kDefs[] = {
    {OpKind::top_k, sort_supports, sort_plan, {}},
    {OpKind::argsort, sort_supports, sort_plan, {}},
    {OpKind::expert_weights, weights_supports, weights_plan, {}},
    {OpKind::moe_combine, combine_supports, combine_plan, {}},
    {OpKind::concat, concat_supports, concat_plan, {}},
};

}  // namespace

std::span<const KernelDef> routing_kernels() { return kDefs; }

}  // namespace sy::vulkan
