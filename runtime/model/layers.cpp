#include "model/layers.hpp"

#include <cmath>

namespace sy::model {

using graph::TensorId;

const GraphTensor* Resolver::req(const std::string& name) {
  const GraphTensor* t = w_.find(name);
  if (!t && status_)
    status_ = error::invalid_argument("the model file lacks tensor " + name + ", which the " + arch_ +
                                      " architecture needs; the file may be incomplete or mislabelled");
  return t;
}

EmbeddingWeights resolve_embeddings(Resolver& r) {
  EmbeddingWeights e;
  e.tok_embd = r.req("token_embd.weight");
  e.out_norm = r.req("output_norm.weight");
  e.output = r.opt("output.weight");
  if (!e.output) e.output = e.tok_embd;  // tied embeddings
  return e;
}

TensorId lm_head(Ctx& c, const EmbeddingWeights& w, TensorId x) {
  const TensorId logits = c.g.matmul(c.w(w.output), c.g.norm(x, c.w(w.out_norm), c.hp.eps));
  c.g.mark_output(logits);
  return logits;
}

AttentionWeights resolve_attention(Resolver& r, const std::string& p) {
  AttentionWeights a;
  a.q = r.req(p + "attn_q.weight");
  a.k = r.req(p + "attn_k.weight");
  a.v = r.req(p + "attn_v.weight");
  a.o = r.req(p + "attn_output.weight");
  a.bq = r.opt(p + "attn_q.bias");
  a.bk = r.opt(p + "attn_k.bias");
  a.bv = r.opt(p + "attn_v.bias");
  a.q_norm = r.opt(p + "attn_q_norm.weight");
  a.k_norm = r.opt(p + "attn_k_norm.weight");
  return a;
}

DeltaNetWeights resolve_delta(Resolver& r, const std::string& p) {
  DeltaNetWeights d;
  d.qkv = r.req(p + "attn_qkv.weight");
  d.z = r.req(p + "attn_gate.weight");
  d.conv = r.req(p + "ssm_conv1d.weight");
  d.dt_bias = r.req(p + "ssm_dt.bias");
  d.a = r.req(p + "ssm_a");
  d.beta = r.req(p + "ssm_beta.weight");
  d.alpha = r.req(p + "ssm_alpha.weight");
  d.norm = r.req(p + "ssm_norm.weight");
  d.out = r.req(p + "ssm_out.weight");
  return d;
}

FfnWeights resolve_ffn(Resolver& r, const std::string& p, const std::string& suffix) {
  FfnWeights f;
  f.gate = r.req(p + "ffn_gate" + suffix + ".weight");
  f.up = r.req(p + "ffn_up" + suffix + ".weight");
  f.down = r.req(p + "ffn_down" + suffix + ".weight");
  return f;
}

MoeWeights resolve_moe(Resolver& r, const std::string& p) {
  MoeWeights m;
  m.router = r.req(p + "ffn_gate_inp.weight");
  m.gate = r.req(p + "ffn_gate_exps.weight");
  m.up = r.req(p + "ffn_up_exps.weight");
  m.down = r.req(p + "ffn_down_exps.weight");
  if (r.opt(p + "ffn_up_shexp.weight")) m.shared = resolve_ffn(r, p, "_shexp");
  m.shared_gate = r.opt(p + "ffn_gate_inp_shexp.weight");
  return m;
}

void Ctx::bind_inputs() {
  const int64_t n = in.n_tokens;
  tokens = g.input(StorageType::I32, in.tokens, n);
  positions = g.input(StorageType::I32, in.positions, n);
  kv_slots = g.input(StorageType::I32, in.kv_slots, n);
  seq_rows = g.input(StorageType::I32, in.seq_rows, n);
  state_slots = g.input(StorageType::I32, in.state_slots, n);
  out_rows = g.input(StorageType::I32, in.out_rows, in.n_outputs);
  tables = g.input(StorageType::I32, in.block_tables, in.table_blocks, in.table_rows);
}

namespace {

TensorId add_bias(Ctx& c, TensorId x, const GraphTensor* b) {
  return b ? c.g.binary(OpKind::add, x, c.w(b)) : x;
}

}  // namespace

TensorId concat(graph::Graph& g, TensorId a, TensorId b, int dim) {
  const GraphTensor& ta = g.tensor_at(a);
  int64_t ne[4] = {ta.ne[0], ta.ne[1], ta.ne[2], ta.ne[3]};
  ne[dim] += g.tensor_at(b).ne[dim];
  return g.op(OpKind::concat, g.tensor(StorageType::F32, ne[0], ne[1], ne[2], ne[3]), {a, b}, {dim});
}

TensorId rope(Ctx& c, TensorId x, int mode) {
  const auto& hp = c.hp;
  const GraphTensor& t = c.g.tensor_at(x);
  const TensorId d = c.g.tensor(StorageType::F32, t.ne[0], t.ne[1], t.ne[2]);
  return c.g.op(OpKind::rope, d, {x, c.positions},
                {mode, static_cast<int32_t>(hp.n_rot), hp.rope_sections[0], hp.rope_sections[1], hp.rope_sections[2],
                 hp.rope_sections[3]},
                {hp.rope_base, hp.rope_scale});
}

TensorId attention(Ctx& c, const AttentionWeights& w, TensorId x, int64_t kv_layer, int rope_mode, bool gated) {
  auto& g = c.g;
  const auto& hp = c.hp;
  const int64_t n = c.in.n_tokens, hd = hp.head_dim_k, nh = hp.n_head, nkv = hp.n_head_kv;
  TensorId q, gate = -1;
  const TensorId qp = add_bias(c, g.matmul(c.w(w.q), x), w.bq);
  if (gated) {
    // attn_q yields [q_h | gate_h] per head.
    const int64_t row = 2 * hd * nh * 4;
    q = g.view(qp, {hd, nh, n}, {2 * hd * 4, row}, 0);
    gate = g.view(qp, {hd, nh, n}, {2 * hd * 4, row}, static_cast<size_t>(hd * 4));
  } else {
    q = g.reshape(qp, hd, nh, n);
  }
  TensorId k = g.reshape(add_bias(c, g.matmul(c.w(w.k), x), w.bk), hd, nkv, n);
  const TensorId v = g.reshape(add_bias(c, g.matmul(c.w(w.v), x), w.bv), hp.head_dim_v, nkv, n);
  if (w.q_norm) q = g.norm(q, c.w(w.q_norm), hp.eps);
  if (w.k_norm) k = g.norm(k, c.w(w.k_norm), hp.eps);
  q = rope(c, q, rope_mode);
  k = rope(c, k, rope_mode);
  const auto kl = static_cast<size_t>(kv_layer);
  const TensorId kc = g.persistent(c.in.k_cache[kl], c.in.cache_device);
  const TensorId vc = g.persistent(c.in.v_cache[kl], c.in.cache_device);
  g.op(OpKind::set_rows, kc, {g.reshape(k, hd * nkv, n), c.kv_slots});
  g.op(OpKind::set_rows, vc, {g.reshape(v, hp.head_dim_v * nkv, n), c.kv_slots});
  TensorId o = g.tensor(StorageType::F32, hp.head_dim_v, nh, n);
  g.op(OpKind::attention, o, {q, kc, vc, c.positions, c.seq_rows, c.tables}, {static_cast<int32_t>(c.in.block_size)},
       {1.0f / std::sqrt(static_cast<float>(hd))});
  if (gated) o = g.binary(OpKind::mul, o, g.unary(OpKind::sigmoid, gate));
  return g.matmul(c.w(w.o), g.reshape(o, hp.head_dim_v * nh, n));
}

TensorId delta_net(Ctx& c, const DeltaNetWeights& w, TensorId x, int64_t state_layer) {
  auto& g = c.g;
  const auto& hp = c.hp;
  const int64_t n = c.in.n_tokens, d = hp.ssm_state, kh = hp.ssm_groups, vh = hp.ssm_v_heads;
  const int64_t ch = 2 * kh * d + vh * d;
  const TensorId qkv = g.matmul(c.w(w.qkv), x);
  const TensorId z = g.matmul(c.w(w.z), x);
  const TensorId beta = g.unary(OpKind::sigmoid, g.matmul(c.w(w.beta), x));
  const TensorId alpha = g.binary(OpKind::add, g.matmul(c.w(w.alpha), x), c.w(w.dt_bias));
  const TensorId gdecay = g.binary(OpKind::mul, g.unary(OpKind::softplus, alpha), c.w(w.a));
  const auto sl = static_cast<size_t>(state_layer);
  TensorId conv = g.tensor(StorageType::F32, ch, n);
  g.op(OpKind::conv1d, conv,
       {qkv, c.w(w.conv), g.persistent(c.in.conv_state[sl], c.in.cache_device), c.state_slots});
  conv = g.unary(OpKind::silu, conv);
  const int64_t row = ch * 4;
  TensorId q = g.view(conv, {d, kh, n}, {d * 4, row}, 0);
  TensorId k = g.view(conv, {d, kh, n}, {d * 4, row}, static_cast<size_t>(kh * d * 4));
  const TensorId v = g.view(conv, {d, vh, n}, {d * 4, row}, static_cast<size_t>(2 * kh * d * 4));
  q = g.unary(OpKind::l2_norm, q, {hp.eps});
  k = g.unary(OpKind::l2_norm, k, {hp.eps});
  q = g.unary(OpKind::scale, q, {1.0f / std::sqrt(static_cast<float>(d))});
  TensorId o = g.tensor(StorageType::F32, d, vh, n);
  g.op(OpKind::delta_net, o,
       {q, k, v, gdecay, beta, g.persistent(c.in.delta_state[sl], c.in.cache_device), c.state_slots});
  o = g.norm(o, c.w(w.norm), hp.eps);
  o = g.binary(OpKind::mul, o, g.unary(OpKind::silu, g.reshape(z, d, vh, n)));
  return g.matmul(c.w(w.out), g.reshape(o, d * vh, n));
}

TensorId ffn(Ctx& c, const FfnWeights& w, TensorId x) {
  auto& g = c.g;
  const TensorId h = g.binary(OpKind::swiglu, g.matmul(c.w(w.gate), x), g.matmul(c.w(w.up), x));
  return g.matmul(c.w(w.down), h);
}

TensorId moe(Ctx& c, const MoeWeights& w, TensorId x, const RouterConfig& r) {
  auto& g = c.g;
  const auto& hp = c.hp;
  const GraphTensor& xt = g.tensor_at(x);
  const int64_t n = xt.ne[1], k = hp.n_expert_used, embd = xt.ne[0];
  const TensorId probs = g.unary(r.sigmoid ? OpKind::sigmoid : OpKind::softmax, g.matmul(c.w(w.router), x));
  const TensorId chooser = w.select_bias ? g.binary(OpKind::add, probs, c.w(w.select_bias)) : probs;
  const TensorId ids = g.op(OpKind::top_k, g.tensor(StorageType::I32, k, n), {chooser}, {static_cast<int32_t>(k)});
  if (c.in.tap_routing) g.tap(ids);
  const TensorId weights =
      g.op(OpKind::expert_weights, g.tensor(StorageType::F32, k, n), {probs, ids}, {r.renormalise ? 1 : 0}, {r.scale});
  const TensorId x3 = g.reshape(x, embd, 1, n);
  const TensorId h = g.binary(OpKind::swiglu, g.matmul_id(c.w(w.gate), x3, ids), g.matmul_id(c.w(w.up), x3, ids));
  const TensorId y = g.matmul_id(c.w(w.down), h, ids);
  TensorId out = g.op(OpKind::moe_combine, g.tensor(StorageType::F32, embd, n), {y, weights});
  if (w.shared.up) {
    TensorId s = ffn(c, w.shared, x);
    if (w.shared_gate) {
      const GraphTensor& gt = *w.shared_gate;
      GraphTensor col = gt;  // a 1-D gate is a one-row matrix
      col.ne[1] = 1;
      const TensorId gate = g.unary(OpKind::sigmoid, g.matmul(g.persistent(col, c.dev), x));
      s = g.binary(OpKind::mul, s, gate);
    }
    out = g.binary(OpKind::add, out, s);
  }
  return out;
}

}  // namespace sy::model
