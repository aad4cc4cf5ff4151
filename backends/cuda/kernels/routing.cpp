// Routing and data ops (routing.cu): top_k and argsort over F32 rows of up to 4096 elements
// (each element is ranked against its whole row), expert_weights, moe_combine and concat.
#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

bool i32_layout(const GraphTensor& t) {
  if (t.type != StorageType::I32 || t.elements() <= 0) return false;
  for (int64_t b : t.nb)
    if (b % 4 != 0) return false;
  return true;
}

Support ranked(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 1)) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  if (!f32_layout(x) || !i32_layout(y) || x.ne[0] > kMaxRankRow || x.rows() > 0x7fffffff) return Support::no;
  const int64_t k = n.op == OpKind::top_k ? n.i[0] : x.ne[0];
  if (k < 1 || k > x.ne[0] || y.ne[0] != k) return Support::no;
  for (int d = 1; d < 4; ++d)
    if (y.ne[d] != x.ne[d]) return Support::no;
  return Support::yes;
}

Support expert_weights(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &p = src_of(n, t, 0), &ids = src_of(n, t, 1), &w = dst_of(n, t);
  if (!f32_layout(p) || !i32_layout(ids) || !f32_layout(w)) return Support::no;
  if (p.ne[2] != 1 || p.ne[3] != 1 || ids.ne[2] != 1 || ids.ne[3] != 1 || p.ne[1] != ids.ne[1]) return Support::no;
  return same_shape(ids, w) ? Support::yes : Support::no;
}

Support moe_combine(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &y = src_of(n, t, 0), &w = src_of(n, t, 1), &o = dst_of(n, t);
  if (!f32_layout(y) || !f32_layout(w) || !f32_layout(o) || y.ne[3] != 1) return Support::no;
  if (w.ne[0] != y.ne[1] || w.ne[1] != y.ne[2] || w.ne[2] != 1 || w.ne[3] != 1) return Support::no;
  return o.ne[0] == y.ne[0] && o.ne[1] == y.ne[2] && o.ne[2] == 1 && o.ne[3] == 1 ? Support::yes : Support::no;
}

Support concat(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &a = src_of(n, t, 0), &b = src_of(n, t, 1), &y = dst_of(n, t);
  const int dim = n.i[0];
  if (dim < 0 || dim > 3 || !f32_layout(a) || !f32_layout(b) || !f32_layout(y)) return Support::no;
  for (int d = 0; d < 4; ++d) {
    const int64_t want = d == dim ? a.ne[d] + b.ne[d] : a.ne[d];
    if ((d != dim && b.ne[d] != a.ne[d]) || y.ne[d] != want) return Support::no;
  }
  return Support::yes;
}

int run_ranked(const GraphNode& n, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_rank(rec, host, n.op == OpKind::top_k ? n.i[0] : host.ne[1][0], s);
}
int run_weights(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_expert_weights(rec, host, s);
}
int run_combine(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_moe_combine(rec, host, s);
}
int run_concat(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_concat(rec, host, s); }

constexpr KernelDef kDefs[] = {
    {OpKind::top_k, ranked, run_ranked},
    {OpKind::argsort, ranked, run_ranked},
    {OpKind::expert_weights, expert_weights, run_weights},
    {OpKind::moe_combine, moe_combine, run_combine},
    {OpKind::concat, concat, run_concat},
};

}  // namespace

std::span<const KernelDef> routing_kernels() { return kDefs; }

}  // namespace sy::cuda
