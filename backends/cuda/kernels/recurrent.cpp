// conv1d and delta_net over F32 tensors with F32 state slots (recurrent.cu).
#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

bool dense_f32(const GraphTensor& t) {
  return t.type == StorageType::F32 && t.elements() > 0 && (t.ne[0] == 1 || t.nb[0] == 4) &&
         (t.ne[1] == 1 || t.nb[1] == 4 * t.ne[0]) && t.ne[2] == 1 && t.ne[3] == 1;
}

// A state [n, slots]: each slot's n floats packed.
bool state_ok(const GraphTensor& s, int64_t n) {
  return s.type == StorageType::F32 && s.ne[0] == n && s.ne[2] == 1 && s.ne[3] == 1 && (s.ne[0] == 1 || s.nb[0] == 4) &&
         (s.ne[1] == 1 || s.nb[1] % 4 == 0);
}

bool slot_list(const GraphTensor& t, int64_t n) {
  return t.type == StorageType::I32 && t.ne[0] == n && t.ne[1] == 1 && t.ne[2] == 1 && t.ne[3] == 1 && t.nb[0] % 4 == 0;
}

Support conv1d(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 4)) return Support::no;
  const auto &x = src_of(n, t, 0), &w = src_of(n, t, 1), &st = src_of(n, t, 2), &slots = src_of(n, t, 3), &y = dst_of(n, t);
  if (!f32_layout(x) || !f32_layout(y) || !same_shape(x, y) || x.ne[2] != 1 || x.ne[3] != 1) return Support::no;
  const int64_t K = w.ne[0];
  if (K < 1 || K > kMaxConvTaps || w.ne[1] != x.ne[0] || !dense_f32(w)) return Support::no;
  return state_ok(st, (K - 1) * x.ne[0]) && slot_list(slots, x.ne[1]) ? Support::yes : Support::no;
}

Support delta_net(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 7)) return Support::no;
  const auto &q = src_of(n, t, 0), &k = src_of(n, t, 1), &v = src_of(n, t, 2), &g = src_of(n, t, 3);
  const auto &beta = src_of(n, t, 4), &st = src_of(n, t, 5), &slots = src_of(n, t, 6), &o = dst_of(n, t);
  for (const GraphTensor* x : {&q, &k, &v, &g, &beta, &o})
    if (!f32_layout(*x) || x->ne[3] != 1) return Support::no;
  const int64_t dk = q.ne[0], hk = q.ne[1], T = q.ne[2], dv = v.ne[0], hv = v.ne[1];
  if (!same_shape(q, k) || v.ne[2] != T || hk <= 0 || hv % hk != 0 || !same_shape(v, o)) return Support::no;
  if (g.ne[0] != hv || g.ne[1] != T || !same_shape(g, beta) || g.ne[2] != 1) return Support::no;
  return state_ok(st, dk * dv * hv) && slot_list(slots, T) ? Support::yes : Support::no;
}

int run_conv1d(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_conv1d(rec, host, s); }
int run_delta(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_delta_net(rec, host, s); }

constexpr KernelDef kDefs[] = {
    {OpKind::conv1d, conv1d, run_conv1d},
    {OpKind::delta_net, delta_net, run_delta},
};

}  // namespace

std::span<const KernelDef> recurrent_kernels() { return kDefs; }

}  // namespace sy::cuda
