#include "model/layers.hpp"

#include <cmath>

#include "switchyard/quant.hpp"

namespace sy::model {

using graph::TensorId;

namespace {

std::string shape_text(const GraphTensor& t) {
  int dims = 4;
  while (dims > 1 && t.ne[dims - 1] == 1) --dims;
  std::string s = "[";
  for (int i = 0; i < dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
  return s + "]";
}

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i].n);
  return s + "]";
}

}  // namespace

bool Resolver::check(const std::string& name, const GraphTensor& t, const Shape& shape) {
  for (size_t i = 0; i < 4; ++i) {
    const int64_t want = i < shape.size() ? shape[i].n : 1;
    if (t.ne[i] == want) continue;
    std::string why = "tensor " + name + " is " + shape_text(t) + " but the " + arch_ + " metadata needs " +
                      shape_text(shape) + ": ";
    if (i < shape.size())
      why += "dimension " + std::to_string(i + 1) + " is " + std::to_string(t.ne[i]) + " where " + shape[i].from +
             (shape[i].from.find(" x ") != std::string::npos || shape[i].from.find(" + ") != std::string::npos
                  ? " gives " + std::to_string(want)
                  : "");
    else
      why += "it has " + std::to_string(i + 1) + " or more dimensions where " + std::to_string(shape.size()) +
             " are expected";
    fail(why + "; the file's hyper-parameters disagree with its tensors");
    return false;
  }
  return true;
}

const GraphTensor* Resolver::req(const std::string& name, const Shape& shape) {
  const GraphTensor* t = w_.find(name);
  if (!t) {
    fail("the model file lacks tensor " + name + ", which the " + arch_ +
         " architecture needs; the file may be incomplete or mislabelled");
    return nullptr;
  }
  return check(name, *t, shape) ? t : nullptr;
}

const GraphTensor* Resolver::opt(const std::string& name, const Shape& shape) {
  const GraphTensor* t = w_.find(name);
  return t && check(name, *t, shape) ? t : nullptr;
}

bool Resolver::check_f32(const std::string& name, const GraphTensor* t) {
  if (!t || t->type == StorageType::F32) return true;
  fail("tensor " + name + " is stored as " + std::string(storage_type_name(t->type)) +
       "; norm weights, biases and convolution kernels must be F32");
  return false;
}

const GraphTensor* Resolver::req_f32(const std::string& name, const Shape& shape) {
  const GraphTensor* t = req(name, shape);
  return check_f32(name, t) ? t : nullptr;
}

const GraphTensor* Resolver::opt_f32(const std::string& name, const Shape& shape) {
  const GraphTensor* t = opt(name, shape);
  return check_f32(name, t) ? t : nullptr;
}

const GraphTensor* Resolver::rows(const GraphTensor* t, int64_t first, int64_t n) {
  if (!t) return nullptr;
  GraphTensor v = *t;
  const bool vector = t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
  size_t bytes = 0;
  if (vector) {
    // Biases: F32 or F16 elements, so any element starts a block.
    if (storage_type_info(t->type).block_size != 1) {
      fail("a fused bias stored as " + std::string(storage_type_name(t->type)) + " cannot be split; convert it to F32");
      return nullptr;
    }
    v.ne[0] = n;
    bytes = static_cast<size_t>(first * t->nb[0]);
  } else {
    // An interleaved layout (a repacked Q4_K, Q4_0 or Q8_0) splits only at whole row groups.
    const int64_t group = interleave_rows(t->type);
    if (first % group != 0 || n % group != 0) {
      fail("a fused " + std::string(storage_type_name(t->type)) + " matrix cannot be split at row " +
           std::to_string(first) + " (its rows come in groups of " + std::to_string(group) +
           "); set backends[cpu].repack: false to keep the file's layout");
      return nullptr;
    }
    v.ne[1] = n;
    bytes = static_cast<size_t>(first * t->nb[1]);
  }
  graph::set_contiguous_strides(v);
  v.offset += bytes;
  if (v.data) v.data = static_cast<std::byte*>(v.data) + bytes;
  views_.push_back(v);
  return &views_.back();
}

EmbeddingWeights resolve_embeddings(Resolver& r, const Dims& d) {
  EmbeddingWeights e;
  e.tok_embd = r.req("token_embd.weight", {d.embd(), d.vocab()});
  e.out_norm = r.req_f32("output_norm.weight", {d.embd()});
  e.output = r.opt("output.weight", {d.embd(), d.vocab()});
  if (!e.output) e.output = e.tok_embd;  // tied embeddings
  e.output_bias = r.opt_f32("output.bias", {d.vocab()});
  return e;
}

const GraphTensor* resolve_rope_freqs(Resolver& r, const Dims& d, bool applied) {
  const std::string name = "rope_freqs.weight";
  if (!r.has(name)) return nullptr;
  if (!applied) {
    // Running without factors the file asks for would give plausible but wrong logits.
    r.fail("the model has " + name + " (RoPE frequency factors), which the " + r.arch() +
           " architecture does not apply (llama.cpp refuses such a file too); remove the tensor or convert the "
           "checkpoint again");
    return nullptr;
  }
  const GraphTensor* t = r.opt(name, {{d.hp.n_rot / 2, "half of " + d.key("rope.dimension_count", d.hp.n_rot)}});
  if (t && t->type != StorageType::F32) {
    r.fail("tensor " + name + " is stored as " + std::string(storage_type_name(t->type)) +
           "; RoPE frequency factors must be F32 (as llama.cpp's converters write them)");
    return nullptr;
  }
  return t;
}

TensorId lm_head(Ctx& c, const EmbeddingWeights& w, TensorId x) {
  TensorId logits = c.linear(w.output, c.g.norm(x, c.w(w.out_norm), c.hp.eps));
  if (w.output_bias) logits = c.g.binary(OpKind::add, logits, c.w(w.output_bias));
  c.g.mark_output(logits);
  return logits;
}

AttentionWeights resolve_attention(Resolver& r, const Dims& d, const std::string& p, bool gated_q) {
  AttentionWeights a;
  const Dim q = d.q(gated_q), k = d.k(), v = d.v();
  if (r.has(p + "attn_qkv.weight")) {
    // llama.cpp's fused layout: the query rows, then the key rows, then the value rows.
    const Dim qkv{q.n + k.n + v.n, "(" + q.from + ") + (" + k.from + ") + (" + v.from + ")"};
    const GraphTensor* f = r.req(p + "attn_qkv.weight", {d.embd(), qkv});
    a.q = r.rows(f, 0, q.n);
    a.k = r.rows(f, q.n, k.n);
    a.v = r.rows(f, q.n + k.n, v.n);
    if (const GraphTensor* b = r.opt_f32(p + "attn_qkv.bias", {qkv})) {
      a.bq = r.rows(b, 0, q.n);
      a.bk = r.rows(b, q.n, k.n);
      a.bv = r.rows(b, q.n + k.n, v.n);
    } else {  // as an earlier llama.cpp release wrote them beside a fused weight
      a.bq = r.opt_f32(p + "attn_q.bias", {q});
      a.bk = r.opt_f32(p + "attn_k.bias", {k});
      a.bv = r.opt_f32(p + "attn_v.bias", {v});
    }
  } else {
    a.q = r.req(p + "attn_q.weight", {d.embd(), q});
    a.k = r.req(p + "attn_k.weight", {d.embd(), k});
    a.v = r.req(p + "attn_v.weight", {d.embd(), v});
    a.bq = r.opt_f32(p + "attn_q.bias", {q});
    a.bk = r.opt_f32(p + "attn_k.bias", {k});
    a.bv = r.opt_f32(p + "attn_v.bias", {v});
  }
  a.o = r.req(p + "attn_output.weight", {d.o(), d.embd()});
  a.bo = r.opt_f32(p + "attn_output.bias", {d.embd()});
  a.q_norm = r.opt_f32(p + "attn_q_norm.weight", {d.head_k()});
  a.k_norm = r.opt_f32(p + "attn_k_norm.weight", {d.head_k()});
  return a;
}

DeltaNetWeights resolve_delta(Resolver& r, const HParams& hp, const std::string& p) {
  const Dims d{hp};
  const Dim state{hp.ssm_state, d.key("ssm.state_size", hp.ssm_state)};
  const Dim vh{hp.ssm_v_heads, d.key("ssm.time_step_rank", hp.ssm_v_heads)};
  const Dim vdim{hp.ssm_v_heads * hp.ssm_state, vh.from + " x " + state.from};
  const Dim ch{2 * hp.ssm_groups * hp.ssm_state + hp.ssm_v_heads * hp.ssm_state,
               "2 x " + d.key("ssm.group_count", hp.ssm_groups) + " x " + state.from + " + " + vdim.from};
  const Dim kernel{hp.ssm_conv_kernel, d.key("ssm.conv_kernel", hp.ssm_conv_kernel)};
  DeltaNetWeights w;
  w.qkv = r.req(p + "attn_qkv.weight", {d.embd(), ch});
  w.z = r.req(p + "attn_gate.weight", {d.embd(), vdim});
  w.conv = r.req_f32(p + "ssm_conv1d.weight", {kernel, ch});
  w.dt_bias = r.req_f32(p + "ssm_dt.bias", {vh});
  w.a = r.req_f32(p + "ssm_a", {vh});
  w.beta = r.req(p + "ssm_beta.weight", {d.embd(), vh});
  w.alpha = r.req(p + "ssm_alpha.weight", {d.embd(), vh});
  w.norm = r.req_f32(p + "ssm_norm.weight", {state});
  w.out = r.req(p + "ssm_out.weight", {vdim, d.embd()});
  return w;
}

FfnWeights resolve_ffn(Resolver& r, const Dims& d, const std::string& p, const std::string& suffix, const Dim& width) {
  FfnWeights f;
  f.gate = r.req(p + "ffn_gate" + suffix + ".weight", {d.embd(), width});
  f.up = r.req(p + "ffn_up" + suffix + ".weight", {d.embd(), width});
  f.down = r.req(p + "ffn_down" + suffix + ".weight", {width, d.embd()});
  f.b_gate = r.opt_f32(p + "ffn_gate" + suffix + ".bias", {width});
  f.b_up = r.opt_f32(p + "ffn_up" + suffix + ".bias", {width});
  f.b_down = r.opt_f32(p + "ffn_down" + suffix + ".bias", {d.embd()});
  return f;
}

MoeWeights resolve_moe(Resolver& r, const Dims& d, const std::string& p) {
  MoeWeights m;
  const Dim ff = d.ff_exp(), n = d.experts();
  m.router = r.req(p + "ffn_gate_inp.weight", {d.embd(), n});
  if (r.has(p + "ffn_gate_up_exps.weight")) {
    // Per expert, the gate rows then the up rows (llama.cpp's ffn_gate_up_exps).
    m.gate_up = r.req(p + "ffn_gate_up_exps.weight", {d.embd(), {2 * ff.n, "2 x " + ff.from}, n});
  } else if (!r.has(p + "ffn_gate_exps.weight") && r.has(p + "ffn_gate.0.weight")) {
    r.fail("the model stores its experts one tensor each (" + p +
           "ffn_gate.0.weight ...), a layout llama.cpp no longer loads either; convert the checkpoint again with a "
           "current convert_hf_to_gguf.py, which writes " + p + "ffn_gate_exps.weight");
  } else if (!r.has(p + "ffn_gate_exps.weight") && r.has(p + "ffn_up_exps.weight")) {
    r.fail("the model has " + p + "ffn_up_exps.weight but no " + p +
           "ffn_gate_exps.weight: experts without a gate projection are not supported");
  } else {
    m.gate = r.req(p + "ffn_gate_exps.weight", {d.embd(), ff, n});
    m.up = r.req(p + "ffn_up_exps.weight", {d.embd(), ff, n});
  }
  m.down = r.req(p + "ffn_down_exps.weight", {ff, d.embd(), n});
  if (r.has(p + "ffn_up_shexp.weight")) m.shared = resolve_ffn(r, d, p, "_shexp", d.ff_shexp());
  m.shared_gate = r.opt(p + "ffn_gate_inp_shexp.weight", {d.embd()});
  return m;
}

TensorId Ctx::ordered_input(const GraphTensor* weight, TensorId x) const {
  const GraphTensor* order = weights.input_order(weight);
  if (!order) return x;
  const GraphTensor& t = g.tensor_at(x);
  const int64_t ne1 = t.ne[1], ne2 = t.ne[2], ne3 = t.ne[3];
  const TensorId ids = w(order);
  return g.op(OpKind::gather_cols, g.tensor(StorageType::F32, order->ne[0], ne1, ne2, ne3), {x, ids});
}

TensorId Ctx::static_input(const GraphTensor* weight, TensorId x) const {
  const auto scales = weights.input_scales(weight);
  if (scales.empty()) return x;
  for (const Quantized& q : quantized)
    if (q.x == x && q.scale == scales.front()) return q.q;
  std::vector<TensorId> src{x};
  for (const GraphTensor* s : scales) src.push_back(w(s));
  const GraphTensor& t = g.tensor_at(x);
  const TensorId q = g.op(OpKind::fp8_qdq, g.tensor(StorageType::F32, t.ne[0], t.ne[1], t.ne[2], t.ne[3]), src);
  quantized.push_back({x, scales.front(), q});
  return q;
}

void Ctx::tap(const GraphTensor* weight, TensorId x, TensorId ids) const {
  if (!in.linear_taps) return;
  g.mark_output(x);
  if (ids >= 0) g.mark_output(ids);
  in.linear_taps->push_back({weight, x, ids});
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

TensorId rope(Ctx& c, TensorId x, int mode, int device) {
  const auto& hp = c.hp;
  const GraphTensor& t = c.g.tensor_at(x);
  const TensorId d = c.g.tensor(StorageType::F32, t.ne[0], t.ne[1], t.ne[2]);
  if (c.rope_freqs)
    return c.g.op(OpKind::rope, d, {x, c.positions, device >= 0 ? c.w_on(c.rope_freqs, device) : c.w(c.rope_freqs)},
                  {mode, static_cast<int32_t>(hp.n_rot), hp.rope_sections[0], hp.rope_sections[1],
                   hp.rope_sections[2], hp.rope_sections[3]},
                  {hp.rope_base, hp.rope_scale});
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
  const TensorId qp = add_bias(c, c.linear(w.q, x), w.bq);
  if (gated) {
    // attn_q yields [q_h | gate_h] per head.
    const int64_t row = 2 * hd * nh * 4;
    q = g.view(qp, {hd, nh, n}, {2 * hd * 4, row}, 0);
    gate = g.view(qp, {hd, nh, n}, {2 * hd * 4, row}, static_cast<size_t>(hd * 4));
  } else {
    q = g.reshape(qp, hd, nh, n);
  }
  TensorId k = g.reshape(add_bias(c, c.linear(w.k, x), w.bk), hd, nkv, n);
  const TensorId v = g.reshape(add_bias(c, c.linear(w.v, x), w.bv), hp.head_dim_v, nkv, n);
  if (w.q_norm) q = g.norm(q, c.w(w.q_norm), hp.eps);
  if (w.k_norm) k = g.norm(k, c.w(w.k_norm), hp.eps);
  // The rotation runs where this layer's projections are, with the factors' copy there.
  q = rope(c, q, rope_mode, c.weights.device_of(*w.q));
  k = rope(c, k, rope_mode, c.weights.device_of(*w.k));
  const auto kl = static_cast<size_t>(kv_layer);
  const TensorId kc = g.persistent(c.in.k_cache[kl], c.in.kv_device[kl]);
  const TensorId vc = g.persistent(c.in.v_cache[kl], c.in.kv_device[kl]);
  g.op(OpKind::set_rows, kc, {g.reshape(k, hd * nkv, n), c.kv_slots});
  g.op(OpKind::set_rows, vc, {g.reshape(v, hp.head_dim_v * nkv, n), c.kv_slots});
  TensorId o = g.tensor(StorageType::F32, hp.head_dim_v, nh, n);
  g.op(OpKind::attention, o, {q, kc, vc, c.positions, c.seq_rows, c.tables}, {static_cast<int32_t>(c.in.block_size)},
       {1.0f / std::sqrt(static_cast<float>(hd))});
  if (gated) o = g.binary(OpKind::mul, o, g.unary(OpKind::sigmoid, gate));
  return add_bias(c, c.linear(w.o, g.reshape(o, hp.head_dim_v * nh, n)), w.bo);
}

TensorId delta_net(Ctx& c, const DeltaNetWeights& w, TensorId x, int64_t state_layer) {
  auto& g = c.g;
  const auto& hp = c.hp;
  const int64_t n = c.in.n_tokens, d = hp.ssm_state, kh = hp.ssm_groups, vh = hp.ssm_v_heads;
  const int64_t ch = 2 * kh * d + vh * d;
  const TensorId qkv = c.linear(w.qkv, x);
  const TensorId z = c.linear(w.z, x);
  const TensorId beta = g.unary(OpKind::sigmoid, c.linear(w.beta, x));
  const TensorId alpha = g.binary(OpKind::add, c.linear(w.alpha, x), c.w(w.dt_bias));
  const TensorId gdecay = g.binary(OpKind::mul, g.unary(OpKind::softplus, alpha), c.w(w.a));
  const auto sl = static_cast<size_t>(state_layer);
  TensorId conv = g.tensor(StorageType::F32, ch, n);
  g.op(OpKind::conv1d, conv,
       {qkv, c.w(w.conv), g.persistent(c.in.conv_state[sl], c.in.state_device[sl]), c.state_slots});
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
       {q, k, v, gdecay, beta, g.persistent(c.in.delta_state[sl], c.in.state_device[sl]), c.state_slots});
  o = g.norm(o, c.w(w.norm), hp.eps);
  o = g.binary(OpKind::mul, o, g.unary(OpKind::silu, g.reshape(z, d, vh, n)));
  return c.linear(w.out, g.reshape(o, d * vh, n));
}

TensorId ffn(Ctx& c, const FfnWeights& w, TensorId x) {
  auto& g = c.g;
  const TensorId h = g.binary(OpKind::swiglu, add_bias(c, c.linear(w.gate, x), w.b_gate),
                              add_bias(c, c.linear(w.up, x), w.b_up));
  return add_bias(c, c.linear(w.down, h), w.b_down);
}

TensorId moe(Ctx& c, const MoeWeights& w, TensorId x, const RouterConfig& r) {
  auto& g = c.g;
  const auto& hp = c.hp;
  const GraphTensor& xt = g.tensor_at(x);
  const int64_t n = xt.ne[1], k = hp.n_expert_used, embd = xt.ne[0];
  const TensorId probs = g.unary(r.sigmoid ? OpKind::sigmoid : OpKind::softmax, c.linear(w.router, x));
  const TensorId chooser = w.select_bias ? g.binary(OpKind::add, probs, c.w(w.select_bias)) : probs;
  const TensorId ids = g.op(OpKind::top_k, g.tensor(StorageType::I32, k, n), {chooser}, {static_cast<int32_t>(k)});
  if (c.in.tap_routing) g.tap(ids);
  const TensorId weights =
      g.op(OpKind::expert_weights, g.tensor(StorageType::F32, k, n), {probs, ids}, {r.renormalise ? 1 : 0}, {r.scale});
  const TensorId x3 = g.reshape(x, embd, 1, n);
  TensorId h;
  if (w.gate_up) {
    // One product per chosen expert, then the gate and up halves of each row as views.
    const TensorId gu = c.expert_linear(w.gate_up, x3, ids);  // [2 ff, k, n]
    const int64_t ff = w.gate_up->ne[1] / 2;
    const int64_t row = 2 * ff * 4;
    const TensorId gate = g.view(gu, {ff, k, n}, {row, row * k}, 0);
    const TensorId up = g.view(gu, {ff, k, n}, {row, row * k}, static_cast<size_t>(ff * 4));
    h = g.op(OpKind::swiglu, g.tensor(StorageType::F32, ff, k, n), {gate, up});
  } else {
    h = g.binary(OpKind::swiglu, c.expert_linear(w.gate, x3, ids), c.expert_linear(w.up, x3, ids));
  }
  const TensorId y = c.expert_linear(w.down, h, ids);
  TensorId out = g.op(OpKind::moe_combine, g.tensor(StorageType::F32, embd, n), {y, weights});
  if (w.shared.up) {
    TensorId s = ffn(c, w.shared, x);
    if (w.shared_gate) {
      const GraphTensor& gt = *w.shared_gate;
      GraphTensor col = gt;  // a 1-D gate is a one-row matrix
      col.ne[1] = 1;
      const TensorId gate = g.unary(OpKind::sigmoid, g.matmul(g.persistent(col, c.weights.device_of(col)), x));
      s = g.binary(OpKind::mul, s, gate);
    }
    out = g.binary(OpKind::add, out, s);
  }
  return out;
}

}  // namespace sy::model
