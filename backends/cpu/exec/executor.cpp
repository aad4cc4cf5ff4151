#include "executor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "attention.hpp"
#include "dot.hpp"
#include "matmul.hpp"
#include "ops.hpp"
#include "parallel_rows.hpp"
#include "seq_ops.hpp"
#include "switchyard/quant.hpp"

namespace sy::cpu {
namespace {

Status bad(const GraphNode& n, const std::string& what) {
  return error::invalid_argument("cpu: " + std::string(op_name(n.op)) + ": " + what);
}

bool is_f32(const GraphTensor& t) { return t.type == StorageType::F32 && t.data != nullptr; }

View view_of(const GraphTensor& t) {
  View v;
  v.data = static_cast<float*>(t.data);
  for (int d = 0; d < 4; ++d) {
    v.ne[d] = t.ne[d];
    v.st[d] = t.nb[d] / static_cast<int64_t>(sizeof(float));
  }
  return v;
}

bool contiguous(const GraphTensor& t) {
  const auto row = storage_row_bytes(t.type, static_cast<uint64_t>(t.ne[0]));
  if (!row) return false;
  int64_t expect = static_cast<int64_t>(*row);
  if (t.ne[0] > 1 && storage_type_info(t.type).block_size == 1 &&
      t.nb[0] != static_cast<int64_t>(storage_type_info(t.type).block_bytes))
    return false;
  for (int d = 1; d < 4; ++d) {
    if (t.ne[d] > 1 && t.nb[d] != expect) return false;
    expect *= t.ne[d];
  }
  return true;
}

std::span<const int32_t> ids_of(const GraphTensor& t) {
  return {static_cast<const int32_t*>(t.data), static_cast<size_t>(t.elements())};
}

// Runs of consecutive tokens sharing the same value of `key` (a sequence's state slot or
// block-table row): fn(first, count, key).
template <class F>
Status for_runs(std::span<const int32_t> key, F&& fn) {
  size_t i = 0;
  while (i < key.size()) {
    size_t j = i + 1;
    while (j < key.size() && key[j] == key[i]) ++j;
    if (auto st = fn(static_cast<int64_t>(i), static_cast<int64_t>(j - i), key[i]); !st) return st;
    i = j;
  }
  return Status::ok();
}

// A view of tokens [t0, t0 + n) along dimension `dim` (the token axis).
View token_slice(View v, int dim, int64_t t0, int64_t n) {
  v.data += t0 * v.st[dim];
  v.ne[dim] = n;
  return v;
}

// The storage type a node's kernel is chosen by: the weights of a matmul, the table of a
// row lookup, the cache attention reads or set_rows writes, the non-f32 side of a copy.
StorageType deciding_type(const GraphNode& n, std::span<const GraphTensor> t) {
  const auto type = [&](int32_t i) { return t[static_cast<size_t>(i)].type; };
  switch (n.op) {
    case OpKind::matmul:
    case OpKind::matmul_id:
    case OpKind::get_rows: return type(n.src[0]);
    case OpKind::attention: return type(n.src[1]);
    case OpKind::set_rows: return type(n.dst);
    case OpKind::copy: return type(n.src[0]) != StorageType::F32 ? type(n.src[0]) : type(n.dst);
    default: break;
  }
  for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s)
    if (type(n.src[s]) != StorageType::F32 && type(n.src[s]) != StorageType::I32) return type(n.src[s]);
  return StorageType::F32;
}

}  // namespace

bool Executor::supports(const GraphNode& node, std::span<const GraphTensor> tensors) const {
  const StorageType type = deciding_type(node, tensors);
  switch (node.op) {
    case OpKind::matmul:
    case OpKind::matmul_id: return (repack_ || interleave_rows(type) == 1) && dot_kernel(type, isa_).usable();
    case OpKind::get_rows:
    case OpKind::set_rows:
    case OpKind::copy: return storage_type_info(type).block_size > 0 && type != StorageType::I32;
    case OpKind::attention:
      return type == StorageType::F32 || type == StorageType::F16 || type == StorageType::BF16 ||
             type == StorageType::Q8_0 || type == StorageType::Q4_0;
    case OpKind::concat:
    case OpKind::argsort: return type == StorageType::F32;
    default: return type == StorageType::F32;
  }
}

Status Executor::run(const SubGraph& g) {
  const ThreadPool::Hot hot(pool_);  // the nodes' regions come back to back
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    size_t used = 0;
    if (auto st = gate_up_nodes(g, i, used); !st) return st;
    if (used > 0) {
      i += used - 1;
      continue;
    }
    if (auto st = node(g, g.nodes[i]); !st) return st;
  }
  return Status::ok();
}

namespace {

Status matmul_args(const GraphTensor& w, const GraphTensor& x, const GraphTensor& y, MatmulArgs& a) {
  if (!contiguous(x) || !contiguous(y) || !is_f32(x) || !is_f32(y))
    return error::invalid_argument("cpu: matmul: activations and outputs must be contiguous f32");
  const int64_t m = x.rows();
  if (x.ne[0] != w.ne[0] || y.ne[0] != w.ne[1] || y.rows() != m)
    return error::invalid_argument("cpu: matmul: shapes do not agree (" + std::to_string(w.ne[0]) + "x" +
                                   std::to_string(w.ne[1]) + " weights, " + std::to_string(x.ne[0]) + "-wide input)");
  a = MatmulArgs{w.data, w.type, w.ne[0], w.ne[1], static_cast<const float*>(x.data), m, static_cast<float*>(y.data)};
  return Status::ok();
}

Status matmul_id_args(const GraphTensor& w, const GraphTensor& x, const GraphTensor& ids, const GraphTensor& y,
                      MatmulIdArgs& a) {
  if (!contiguous(x) || !contiguous(y) || !is_f32(x) || !is_f32(y))
    return error::invalid_argument("cpu: matmul_id: activations and outputs must be contiguous f32");
  a.w = w.data;
  a.w_type = w.type;
  a.k = w.ne[0];
  a.rows = w.ne[1];
  a.n_experts = w.ne[2];
  a.x = static_cast<const float*>(x.data);
  a.x_slots = x.ne[1];
  a.ids = ids_of(ids);
  a.n_used = ids.ne[0];
  a.n_tokens = ids.ne[1];
  a.y = static_cast<float*>(y.data);
  if (x.ne[0] != a.k || (a.x_slots != 1 && a.x_slots != a.n_used) || x.ne[2] != a.n_tokens || y.ne[0] != a.rows ||
      y.ne[1] != a.n_used || y.ne[2] != a.n_tokens)
    return error::invalid_argument("cpu: matmul_id: shapes do not agree");
  return Status::ok();
}

// The SwiGLU op itself on n elements: a fused gate/up pair combines its outputs with the
// same code as the swiglu node, so fusing never changes a result.
void swiglu_span(const float* gate, const float* up, float* h, int64_t n) {
  (void)swiglu(View::contiguous(const_cast<float*>(gate), n), View::contiguous(const_cast<float*>(up), n),
               View::contiguous(h, n));
}

bool disjoint(const GraphTensor& a, const GraphTensor& b) {
  const auto* pa = static_cast<const uint8_t*>(a.data);
  const auto* pb = static_cast<const uint8_t*>(b.data);
  // Contiguous tensors of any type (checked by the callers' contiguity tests for f32 ones).
  const auto bytes = [](const GraphTensor& t) {
    const auto row = storage_row_bytes(t.type, static_cast<uint64_t>(t.ne[0]));
    return static_cast<size_t>(row.value_or(0)) * static_cast<size_t>(t.ne[1] * t.ne[2] * t.ne[3]);
  };
  return pa + bytes(a) <= pb || pb + bytes(b) <= pa;
}

}  // namespace

Status Executor::matmul_node(const GraphTensor& w, const GraphTensor& x, const GraphTensor& y) {
  MatmulArgs a;
  if (auto st = matmul_args(w, x, y, a); !st) return st;
  const size_t need = matmul_scratch_bytes(w.type, a.k, a.m, isa_);
  if (scratch_.size() < need) scratch_.resize(need);
  return matmul(a, isa_, pool_, scratch_.data());
}

Status Executor::matmul_id_node(const GraphTensor& w, const GraphTensor& x, const GraphTensor& ids,
                                const GraphTensor& y) {
  MatmulIdArgs a;
  if (auto st = matmul_id_args(w, x, ids, y, a); !st) return st;
  return matmul_id(a, isa_, pool_, id_scratch_);
}

// Peephole: an FFN computes gate = W_g x and up = W_u x and then swiglu(gate, up); the
// model emits the two products as adjacent nodes (in either order) over the same input
// (and, for experts, the same ids). Run as one they share the converted activations and a
// single parallel region, which matters in decode, where each product is tiny. When the
// next node is the SwiGLU of exactly these two outputs it is computed in the same tasks,
// while the outputs are in cache. The sub-graph does not say who else reads gate and up
// (later nodes, another device, the caller), so both are still written in full; the
// SwiGLU output must not partly overlap them (in place on one of them is fine, as for the
// op itself).
Status Executor::gate_up_nodes(const SubGraph& g, size_t i, size_t& used) {
  used = 0;
  if (i + 1 >= g.nodes.size()) return Status::ok();
  const GraphNode& a = g.nodes[i];
  const GraphNode& b = g.nodes[i + 1];
  const bool is_id = a.op == OpKind::matmul_id;
  if (a.op != b.op || (a.op != OpKind::matmul && !is_id) || a.src[1] != b.src[1] || a.dst == b.dst ||
      (is_id && a.src[2] != b.src[2]))
    return Status::ok();
  const auto t = [&](int32_t id) -> const GraphTensor& { return g.tensors[static_cast<size_t>(id)]; };
  const GraphTensor &wa = t(a.src[0]), &wb = t(b.src[0]);
  if (wa.ne[0] != wb.ne[0] || wa.ne[1] != wb.ne[1] || wa.ne[2] != wb.ne[2] || !wa.data || !wb.data ||
      !can_share_activations(wa.type, wb.type, isa_))
    return Status::ok();
  const GraphTensor &ya = t(a.dst), &yb = t(b.dst);
  if (!ya.data || !yb.data || !disjoint(ya, yb)) return Status::ok();
  // b must not read what a writes (fused, b's inputs are read before a's output exists).
  for (int k = 0; k < kMaxSources && b.src[k] >= 0; ++k)
    if (b.src[k] == a.dst || !disjoint(ya, t(b.src[k]))) return Status::ok();
  const GraphNode* s = i + 2 < g.nodes.size() ? &g.nodes[i + 2] : nullptr;
  bool fuse_glu = s && s->op == OpKind::swiglu && ((s->src[0] == a.dst && s->src[1] == b.dst) ||
                                                   (s->src[0] == b.dst && s->src[1] == a.dst));
  const bool a_is_gate = !fuse_glu || s->src[0] == a.dst;
  const GraphNode& gate = a_is_gate ? a : b;
  const GraphNode& up = a_is_gate ? b : a;
  Glu glu;
  if (fuse_glu) {
    const GraphTensor& h = t(s->dst);
    const bool same_shape = h.ne[0] == ya.ne[0] && h.ne[1] == ya.ne[1] && h.ne[2] == ya.ne[2] && h.ne[3] == ya.ne[3];
    const auto clear_of = [&](const GraphTensor& y) { return disjoint(h, y) || h.data == y.data; };
    fuse_glu = is_f32(h) && contiguous(h) && same_shape && clear_of(ya) && clear_of(yb);
    if (fuse_glu) glu = Glu{swiglu_span, static_cast<float*>(h.data)};
  }
  Status st;
  if (is_id) {
    MatmulIdArgs ag, au;
    if (st = matmul_id_args(t(gate.src[0]), t(gate.src[1]), t(gate.src[2]), t(gate.dst), ag); !st) return st;
    if (st = matmul_id_args(t(up.src[0]), t(up.src[1]), t(up.src[2]), t(up.dst), au); !st) return st;
    st = matmul_id_gate_up(ag, au, glu, isa_, pool_, id_scratch_);
  } else {
    MatmulArgs ag, au;
    if (st = matmul_args(t(gate.src[0]), t(gate.src[1]), t(gate.dst), ag); !st) return st;
    if (st = matmul_args(t(up.src[0]), t(up.src[1]), t(up.dst), au); !st) return st;
    const size_t need = matmul_scratch_bytes(ag.w_type, ag.k, ag.m, isa_);
    if (scratch_.size() < need) scratch_.resize(need);
    st = matmul_gate_up(ag, au, glu, isa_, pool_, scratch_.data());
  }
  if (st) used = fuse_glu ? 3 : 2;
  return st;
}

Status Executor::attention_node(const SubGraph& g, const GraphNode& n) {
  const auto& q = g.tensors[n.src[0]];
  const auto& kc = g.tensors[n.src[1]];
  const auto& vc = g.tensors[n.src[2]];
  const auto pos = ids_of(g.tensors[n.src[3]]);
  const auto seq = ids_of(g.tensors[n.src[4]]);
  const auto& tables = g.tensors[n.src[5]];
  const View qv = view_of(q), out = view_of(g.tensors[n.dst]);
  const int64_t block = n.i[0];
  if (block < 1) return bad(n, "the block size must be positive");
  return for_runs(seq, [&](int64_t t0, int64_t cnt, int32_t row) -> Status {
    if (row < 0 || row >= tables.ne[1]) return bad(n, "block-table row " + std::to_string(row) + " does not exist");
    AttentionArgs a;
    a.q = token_slice(qv, 2, t0, cnt);
    a.out = token_slice(out, 2, t0, cnt);
    a.q_pos = pos.subspan(static_cast<size_t>(t0), static_cast<size_t>(cnt));
    const std::span<const int32_t> table{static_cast<const int32_t*>(tables.data) + row * tables.ne[0],
                                         static_cast<size_t>(tables.ne[0])};
    int64_t n_ctx = 0;
    for (int32_t p : a.q_pos) n_ctx = std::max<int64_t>(n_ctx, p + 1);
    if (n_ctx > static_cast<int64_t>(table.size()) * block) return bad(n, "a position lies beyond the sequence's block table");
    a.k = KvRows{kc.data, kc.type, kc.ne[0], kc.ne[1], n_ctx, table, block};
    a.v = KvRows{vc.data, vc.type, vc.ne[0], vc.ne[1], n_ctx, table, block};
    a.scale = n.f[0];
    return attention(a, isa_, pool_, attn_scratch_);
  });
}

Status Executor::conv1d_node(const SubGraph& g, const GraphNode& n) {
  const View x = view_of(g.tensors[n.src[0]]), y = view_of(g.tensors[n.dst]);
  const auto& w = g.tensors[n.src[1]];
  const auto& state = g.tensors[n.src[2]];
  const int64_t K = w.ne[0];
  if (w.ne[1] != x.ne[0] || state.ne[0] != (K - 1) * x.ne[0]) return bad(n, "kernel or state shape does not match");
  return for_runs(ids_of(g.tensors[n.src[3]]), [&](int64_t t0, int64_t cnt, int32_t slot) -> Status {
    if (slot < 0 || slot >= state.ne[1]) return bad(n, "state slot " + std::to_string(slot) + " does not exist");
    auto* s = reinterpret_cast<float*>(static_cast<uint8_t*>(state.data) + slot * state.nb[1]);
    return conv1d_causal(token_slice(x, 1, t0, cnt), static_cast<const float*>(w.data), K, s,
                         token_slice(y, 1, t0, cnt), &pool_);
  });
}

Status Executor::delta_net_node(const SubGraph& g, const GraphNode& n) {
  const auto& state = g.tensors[n.src[5]];
  const View q = view_of(g.tensors[n.src[0]]), k = view_of(g.tensors[n.src[1]]), v = view_of(g.tensors[n.src[2]]);
  const View gv = view_of(g.tensors[n.src[3]]), beta = view_of(g.tensors[n.src[4]]);
  const View out = view_of(g.tensors[n.dst]);
  if (state.ne[0] != q.ne[0] * v.ne[0] * v.ne[1]) return bad(n, "state shape does not match");
  return for_runs(ids_of(g.tensors[n.src[6]]), [&](int64_t t0, int64_t cnt, int32_t slot) -> Status {
    if (slot < 0 || slot >= state.ne[1]) return bad(n, "state slot " + std::to_string(slot) + " does not exist");
    DeltaNetArgs a;
    a.q = token_slice(q, 2, t0, cnt);
    a.k = token_slice(k, 2, t0, cnt);
    a.v = token_slice(v, 2, t0, cnt);
    a.g = token_slice(gv, 1, t0, cnt);
    a.beta = token_slice(beta, 1, t0, cnt);
    a.state = reinterpret_cast<float*>(static_cast<uint8_t*>(state.data) + slot * state.nb[1]);
    a.out = token_slice(out, 2, t0, cnt);
    return delta_net(a, &ops_, &pool_, isa_);
  });
}

Status Executor::node(const SubGraph& g, const GraphNode& n) {
  const auto src = [&](int i) -> const GraphTensor& { return g.tensors[static_cast<size_t>(n.src[i])]; };
  const GraphTensor& d = g.tensors[static_cast<size_t>(n.dst)];
  switch (n.op) {
    case OpKind::get_rows:
      return get_rows(src(0).data, src(0).type, src(0).ne[0], src(0).ne[1], ids_of(src(1)), view_of(d), &ops_);
    case OpKind::rms_norm: return rms_norm(view_of(src(0)), view_of(d), n.f[0], &pool_);
    case OpKind::l2_norm: return l2_norm(view_of(src(0)), view_of(d), n.f[0], &pool_);
    case OpKind::matmul: return matmul_node(src(0), src(1), d);
    case OpKind::matmul_id: return matmul_id_node(src(0), src(1), src(2), d);
    case OpKind::add: return binary(Binary::add, view_of(src(0)), view_of(src(1)), view_of(d), &pool_);
    case OpKind::mul: return binary(Binary::mul, view_of(src(0)), view_of(src(1)), view_of(d), &pool_);
    case OpKind::scale: return scale(view_of(src(0)), n.f[0], view_of(d), &pool_);
    case OpKind::swiglu: return swiglu(view_of(src(0)), view_of(src(1)), view_of(d), &pool_);
    case OpKind::silu: return activate(Activation::silu, view_of(src(0)), view_of(d), &pool_);
    case OpKind::gelu: return activate(Activation::gelu, view_of(src(0)), view_of(d), &pool_);
    case OpKind::sigmoid: return activate(Activation::sigmoid, view_of(src(0)), view_of(d), &pool_);
    case OpKind::softplus: return activate(Activation::softplus, view_of(src(0)), view_of(d), &pool_);
    case OpKind::softmax: return softmax(view_of(src(0)), nullptr, 1.0f, view_of(d), &ops_, &pool_);
    case OpKind::rope: {
      const View x = view_of(src(0)), y = view_of(d);
      if (x.data != y.data)
        for (int64_t r = 0; r < x.rows(); ++r)
          for (int64_t i = 0; i < x.ne[0]; ++i) y.row(r)[i * y.st[0]] = x.row(r)[i * x.st[0]];
      RopeParams p;
      p.mode = n.i[0] == 0 ? RopeMode::normal : n.i[0] == 1 ? RopeMode::neox : RopeMode::multi;
      p.n_dims = n.i[1];
      for (int s = 0; s < 4; ++s) p.sections[s] = n.i[2 + s];
      p.freq_base = n.f[0];
      p.freq_scale = n.f[1] == 0 ? 1.f : n.f[1];
      if (n.src[2] >= 0) {
        const GraphTensor& ff = src(2);
        if (ff.type != StorageType::F32 || !contiguous(ff))
          return bad(n, "the frequency factors must be a contiguous F32 vector");
        p.freq_factors = {static_cast<const float*>(ff.data), static_cast<size_t>(ff.elements())};
      }
      return rope(y, ids_of(src(1)), p, &ops_, &pool_);
    }
    case OpKind::top_k:
      return top_k(view_of(src(0)), n.i[0], {static_cast<int32_t*>(d.data), static_cast<size_t>(d.elements())}, &ops_);
    case OpKind::argsort:
      return argsort_desc(view_of(src(0)), {static_cast<int32_t*>(d.data), static_cast<size_t>(d.elements())});
    case OpKind::expert_weights: {
      const View p = view_of(src(0)), w = view_of(d);
      const auto ids = ids_of(src(1));
      const int64_t used = src(1).ne[0];
      for (int64_t t = 0; t < src(1).ne[1]; ++t) {
        float sum = 0;
        for (int64_t j = 0; j < used; ++j) {
          const int32_t e = ids[static_cast<size_t>(j + t * used)];
          if (e < 0 || e >= p.ne[0]) return bad(n, "expert id out of range");
          sum += w.at(j, t) = p.at(e, t);
        }
        const float f = (n.i[0] != 0 ? 1.0f / sum : 1.0f) * (n.f[0] == 0 ? 1.f : n.f[0]);
        for (int64_t j = 0; j < used; ++j) w.at(j, t) *= f;
      }
      return Status::ok();
    }
    case OpKind::gather_cols: {
      const View x = view_of(src(0)), o = view_of(d);
      const auto ids = ids_of(src(1));
      if (static_cast<int64_t>(ids.size()) != o.ne[0] || x.rows() != o.rows()) return bad(n, "shapes do not match");
      for (int32_t id : ids)
        if (id < 0 || id >= x.ne[0]) return bad(n, "a column id is outside the input row");
      for_rows(&pool_, x.rows(), o.ne[0], [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) {
          const float* xr = x.row(r);
          float* orow = o.row(r);
          for (size_t j = 0; j < ids.size(); ++j) orow[static_cast<int64_t>(j) * o.st[0]] = xr[ids[j] * x.st[0]];
        }
      });
      return Status::ok();
    }
    case OpKind::fp8_qdq: {
      const View x = view_of(src(0)), o = view_of(d);
      if (!x.same_shape(o)) return bad(n, "shapes do not match");
      // The largest scale of the linears that read this activation (graph.hpp).
      float s = 0;
      for (int k = 1; k < kMaxSources && n.src[k] >= 0; ++k) {
        if (!is_f32(src(k))) return bad(n, "activation scales must be f32");
        const View sc = view_of(src(k));
        for (int64_t r = 0; r < sc.rows(); ++r)
          for (int64_t i = 0; i < sc.ne[0]; ++i) s = std::max(s, sc.row(r)[i * sc.st[0]]);
      }
      if (!(s > 0) || !std::isfinite(s)) return bad(n, "the activation scale is not a positive finite number");
      for_rows(&pool_, x.rows(), x.ne[0], [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) {
          const float* xr = x.row(r);
          float* orow = o.row(r);
          for (int64_t i = 0; i < x.ne[0]; ++i) orow[i * o.st[0]] = fp8_e4m3_qdq(xr[i * x.st[0]], s);
        }
      });
      return Status::ok();
    }
    case OpKind::moe_combine: {
      const View y = view_of(src(0)), w = view_of(src(1)), o = view_of(d);
      // Per token, terms added in expert order j from 0, as a sum per element would; the
      // element loop inside vectorizes.
      for_rows(&pool_, y.ne[2], y.ne[0] * y.ne[1], [&](int64_t t0, int64_t t1, int) {
        for (int64_t t = t0; t < t1; ++t) {
          for (int64_t i = 0; i < y.ne[0]; ++i) o.at(i, t) = 0.f;
          for (int64_t j = 0; j < y.ne[1]; ++j) {
            const float wj = w.at(j, t);
            for (int64_t i = 0; i < y.ne[0]; ++i) o.at(i, t) += y.at(i, j, t) * wj;
          }
        }
      });
      return Status::ok();
    }
    case OpKind::copy: {
      if (src(0).type == StorageType::F32 && d.type == StorageType::F32) {
        const View x = view_of(src(0)), y = view_of(d);
        if (x.ne[0] * x.rows() != y.ne[0] * y.rows()) return bad(n, "element counts differ");
        int64_t k = 0;
        for (int64_t r = 0; r < x.rows(); ++r)
          for (int64_t i = 0; i < x.ne[0]; ++i, ++k) y.row(k / y.ne[0])[(k % y.ne[0]) * y.st[0]] = x.row(r)[i * x.st[0]];
        return Status::ok();
      }
      if (src(0).type == StorageType::F32) return convert_from_f32(view_of(src(0)), d.type, d.data, &ops_);
      return convert_to_f32(src(0).data, src(0).type, view_of(d), &ops_);
    }
    case OpKind::set_rows: {
      const View x = view_of(src(0));
      const auto slots = ids_of(src(1));
      const int64_t k = x.ne[0];
      if (k != d.ne[0] * d.ne[1]) return bad(n, "row length does not match the destination");
      const auto row_bytes = storage_row_bytes(d.type, static_cast<uint64_t>(k));
      if (!row_bytes) return bad(n, "rows are not whole blocks of " + std::string(storage_type_name(d.type)));
      if (row_.size() < static_cast<size_t>(k)) row_.resize(static_cast<size_t>(k));
      for (int64_t r = 0; r < x.rows(); ++r) {
        const int32_t slot = slots[static_cast<size_t>(r)];
        if (slot < 0 || slot >= d.ne[2]) return bad(n, "cache slot " + std::to_string(slot) + " does not exist");
        for (int64_t i = 0; i < k; ++i) row_[static_cast<size_t>(i)] = x.row(r)[i * x.st[0]];
        auto* out = static_cast<uint8_t*>(d.data) + slot * d.nb[2];
        if (auto st = quantize_row(d.type, row_.data(), out, k); !st) return st;
      }
      return Status::ok();
    }
    case OpKind::conv1d: return conv1d_node(g, n);
    case OpKind::delta_net: return delta_net_node(g, n);
    case OpKind::attention: return attention_node(g, n);
    case OpKind::concat: return concat(view_of(src(0)), view_of(src(1)), n.i[0], view_of(d));
  }
  return bad(n, "not implemented on the CPU");
}

}  // namespace sy::cpu
