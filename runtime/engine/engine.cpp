#include "engine/engine.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "log/log.hpp"

namespace sy::engine {

Engine::Engine(const model::Model& m, std::vector<Device*> devices, const EngineConfig& cfg)
    : model_(m), cfg_(cfg), sched_(std::move(devices), cfg.strict) {}

Result<std::unique_ptr<Engine>> Engine::create(const model::Model& m, std::vector<Device*> devices,
                                               const EngineConfig& cfg) {
  if (devices.empty()) return error::invalid_argument("the engine needs at least one device");
  if (cfg.ubatch < 1) return error::invalid_argument("context.ubatch must be at least 1");
  std::vector<int> layer_device;
  for (int64_t il = 0; il < m.hparams().n_layer; ++il) layer_device.push_back(m.layer_device(il));
  std::unique_ptr<Engine> e(new Engine(m, devices, cfg));
  auto kv = kv::KvCache::create(m.hparams(), devices, layer_device, cfg.kv);
  if (!kv) return kv.status();
  e->kv_ = std::move(*kv);
  // A layer whose device cannot update its cache keeps the cache in RAM: a load-time
  // decision, logged, so the step never has to copy a cache.
  if (auto moved = e->caches_to_move(layer_device); !moved) {
    return moved.status();
  } else if (*moved) {
    e->kv_.reset();
    kv = kv::KvCache::create(m.hparams(), devices, layer_device, cfg.kv);
    if (!kv) return kv.status();
    e->kv_ = std::move(*kv);
  }
  const auto n = static_cast<size_t>(cfg.ubatch);
  for (auto* v : {&e->tokens_, &e->positions_, &e->cells_, &e->rows_, &e->slots_, &e->outs_}) v->reserve(n);
  if (auto st = e->check_placement(); !st) return st;
  return e;
}

Result<bool> Engine::caches_to_move(std::vector<int>& layer_device) {
  int host = -1;
  for (size_t d = 0; d < sched_.device_count() && host < 0; ++d)
    if (sched_.device(d).info().reads_host_memory) host = static_cast<int>(d);
  if (host < 0) return false;
  // Which model layer each cache buffer belongs to.
  std::vector<std::pair<const Buffer*, int64_t>> owner;
  const auto& hp = model_.hparams();
  size_t full = 0, linear = 0;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    if (hp.is_full_attention(il)) {
      owner.push_back({kv_->k()[full].buffer, il});
      owner.push_back({kv_->v()[full++].buffer, il});
    } else {
      owner.push_back({kv_->conv()[linear].buffer, il});
      owner.push_back({kv_->delta()[linear++].buffer, il});
    }
  }
  build_probe(1);
  bool moved = false;
  const std::span<const GraphTensor> tensors(graph_.tensors());
  for (const GraphNode& n : graph_.nodes()) {
    graph::TensorId cache = -1;
    if (graph_.info(graph_.base(n.dst)).origin == graph::Origin::persistent) cache = graph_.base(n.dst);
    const int s = n.op == OpKind::attention ? 1 : n.op == OpKind::conv1d ? 2 : n.op == OpKind::delta_net ? 5 : -1;
    if (cache < 0 && s >= 0) cache = graph_.base(n.src[s]);
    if (cache < 0) continue;
    const Buffer* buf = graph_.tensor_at(cache).buffer;
    auto it = std::find_if(owner.begin(), owner.end(), [&](const auto& o) { return o.first == buf; });
    if (it == owner.end()) continue;
    const auto il = static_cast<size_t>(it->second);
    const int dev = layer_device[il];
    if (dev == host || sched_.device(static_cast<size_t>(dev)).supports(n, tensors) != Support::no) continue;
    const std::string name = sched_.device(static_cast<size_t>(dev)).info().name;
    if (cfg_.strict)
      return error::unsupported(name + " cannot run " + std::string(op_name(n.op)) + " on layer " + std::to_string(il) +
                                "'s " + std::string(storage_type_name(graph_.tensor_at(cache).type)) +
                                " cache and `strict: true` forbids keeping the cache in RAM; choose another "
                                "context.kv_type or fewer gpu_layers");
    log::get("engine")->warn("fallback: {} cannot run {} on layer {}'s {} cache; that layer's cache stays in RAM and "
                             "the CPU runs its {}",
                             name, op_name(n.op), il, storage_type_name(graph_.tensor_at(cache).type), op_name(n.op));
    layer_device[il] = host;
    moved = true;
  }
  graph_.clear();
  return moved;
}

void Engine::bind_cache(model::StepInputs& in) const {
  in.table_blocks = kv_->table_blocks();
  in.table_rows = kv_->config().n_seq_max;
  in.block_size = kv_->config().block_size;
  in.k_cache = kv_->k();
  in.v_cache = kv_->v();
  in.conv_state = kv_->conv();
  in.delta_state = kv_->delta();
  in.kv_device = kv_->kv_devices();
  in.state_device = kv_->state_devices();
}

void Engine::build_probe(int64_t n_tokens) {
  // A step of n tokens of a sequence that is not there, one output: only shapes matter for
  // placement. The graph's inputs point here (positions take 4 per token for multi-section
  // rope); the probe graph is only placed, never run.
  const auto n = static_cast<size_t>(n_tokens);
  probe_.assign(4 * n + static_cast<size_t>(kv_->table_blocks() * kv_->config().n_seq_max), 0);
  const int32_t* zero = probe_.data();
  const int32_t* table = probe_.data() + 4 * n;
  model::StepInputs in;
  in.n_tokens = n_tokens;
  in.n_outputs = 1;
  in.tokens = in.positions = in.kv_slots = in.seq_rows = in.state_slots = in.out_rows = zero;
  in.block_tables = table;
  bind_cache(in);
  graph_.clear();
  model_.architecture().build(graph_, in);
}

Status Engine::check_placement() {
  // A decode step and a full ubatch of prefill: kernels may accept one shape, not the other.
  for (const int64_t n : {int64_t{1}, cfg_.ubatch}) {
    build_probe(n);
    auto st = sched_.plan(graph_);
    graph_.clear();
    if (!st) return st;
  }
  return Status::ok();
}

Status Engine::decode(std::span<const BatchToken> batch, std::vector<float>& logits) {
  // Sequences must come as consecutive runs, each run seen once.
  for (size_t i = 1; i < batch.size(); ++i)
    if (batch[i].seq != batch[i - 1].seq)
      for (size_t j = 0; j + 1 < i; ++j)
        if (batch[j].seq == batch[i].seq)
          return error::invalid_argument("batch: the tokens of sequence " + std::to_string(batch[i].seq) +
                                         " must be consecutive");
  size_t n_out = 0;
  for (const auto& t : batch) {
    n_out += t.logits ? 1 : 0;
    if (t.id < 0 || t.id >= n_vocab())
      return error::invalid_argument("batch: token id " + std::to_string(t.id) + " is outside the vocabulary (0.." +
                                     std::to_string(n_vocab() - 1) + ")");
  }
  // Reserve every sequence's cells first: a batch that does not fit changes nothing.
  auto& marks = marks_;  // kept between steps: steady-state decode allocates nothing
  marks.clear();
  if (auto st = reserve(batch, marks); !st) return st;
  logits.resize(n_out * static_cast<size_t>(n_vocab()));
  size_t done_out = 0;
  for (size_t first = 0; first < batch.size(); first += static_cast<size_t>(cfg_.ubatch)) {
    const size_t len = std::min(batch.size() - first, static_cast<size_t>(cfg_.ubatch));
    if (auto st = ubatch(first, len, logits.data() + done_out * static_cast<size_t>(n_vocab())); !st) {
      rollback(marks, first + len);
      return st;
    }
    for (size_t k = first; k < first + len; ++k) done_out += batch[k].logits ? 1 : 0;
  }
  return Status::ok();
}

Status Engine::reserve(std::span<const BatchToken> batch, std::vector<Mark>& marks) {
  const auto n = batch.size();
  for (auto* v : {&tokens_, &positions_, &cells_, &rows_, &slots_}) v->resize(n);
  wants_.resize(n);
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && batch[j].seq == batch[i].seq) ++j;
    const int32_t seq = batch[i].seq;
    const int64_t start = kv_->length(seq);
    if (start < 0) {
      rollback(marks, 0);
      return error::not_found("sequence " + std::to_string(seq) + " was not added to the KV cache");
    }
    if (auto st = kv_->extend(seq, static_cast<int64_t>(j - i), cells_.data() + i); !st) {
      rollback(marks, 0);
      return st;
    }
    marks.push_back({seq, start, i});
    const int32_t row = kv_->row(seq);
    for (size_t k = i; k < j; ++k) {
      tokens_[k] = batch[k].id;
      positions_[k] = static_cast<int32_t>(start + static_cast<int64_t>(k - i));
      rows_[k] = row;
      slots_[k] = row;
      wants_[k] = batch[k].logits ? 1 : 0;
    }
    i = j;
  }
  return Status::ok();
}

void Engine::rollback(std::span<const Mark> marks, size_t ran_until) {
  // A recurrent state that a graph may have advanced cannot be rewound: such a sequence is
  // emptied, and its owner recomputes it. Sequences no graph reached keep their state.
  for (const auto& m : marks) {
    const bool untouched = m.first >= ran_until;
    if (!kv_->truncate(m.seq, m.length, untouched)) (void)kv_->truncate(m.seq, 0);
  }
}

Status Engine::ubatch(size_t first, size_t n, float* logits) {
  outs_.clear();
  for (size_t k = 0; k < n; ++k)
    if (wants_[first + k]) outs_.push_back(static_cast<int32_t>(k));
  model::StepInputs in;
  in.n_tokens = static_cast<int64_t>(n);
  in.n_outputs = static_cast<int64_t>(outs_.size());
  in.tokens = tokens_.data() + first;
  in.positions = positions_.data() + first;
  in.kv_slots = cells_.data() + first;
  in.seq_rows = rows_.data() + first;
  in.state_slots = slots_.data() + first;
  in.out_rows = outs_.data();
  in.block_tables = kv_->tables();
  bind_cache(in);
  in.tap_routing = cfg_.routing_stats;
  linear_taps_.clear();
  if (observer_) in.linear_taps = &linear_taps_;
  if (outs_.empty()) {
    // The graph still needs one output row; its logits are dropped.
    dummy_out_ = static_cast<int32_t>(n - 1);
    in.n_outputs = 1;
    in.out_rows = &dummy_out_;
  }
  graph_.clear();
  const graph::TensorId out = model_.architecture().build(graph_, in);
  if (auto st = sched_.run(graph_); !st) return st;
  if (cfg_.routing_stats)
    if (auto st = count_routing(); !st) return st;
  if (observer_)
    if (auto st = report_linears(); !st) return st;
  if (outs_.empty()) return Status::ok();
  const GraphTensor& t = graph_.tensor_at(out);
  const size_t bytes = outs_.size() * static_cast<size_t>(n_vocab()) * sizeof(float);
  if (t.data) {
    std::memcpy(logits, t.data, bytes);
    return Status::ok();
  }
  return t.buffer->download(t.offset, {reinterpret_cast<std::byte*>(logits), bytes});
}

Status Engine::count_routing() {
  const auto& taps = graph_.taps();
  if (routing_.size() < taps.size()) routing_.resize(taps.size(), std::vector<uint64_t>(static_cast<size_t>(model_.hparams().n_expert)));
  for (size_t l = 0; l < taps.size(); ++l) {
    const GraphTensor& t = graph_.tensor_at(taps[l]);
    const auto n = static_cast<size_t>(t.ne[0] * t.ne[1]);
    ids_.resize(n);
    if (t.data) std::memcpy(ids_.data(), t.data, n * sizeof(int32_t));
    else if (auto st = t.buffer->download(t.offset, {reinterpret_cast<std::byte*>(ids_.data()), n * sizeof(int32_t)}); !st)
      return st;
    for (int32_t e : ids_)
      if (e >= 0 && static_cast<size_t>(e) < routing_[l].size()) ++routing_[l][static_cast<size_t>(e)];
  }
  return Status::ok();
}

Status Engine::read_tensor(const GraphTensor& t, std::vector<std::byte>& out) {
  out.resize(static_cast<size_t>(tensor_extent(t)));
  if (t.data) {
    std::memcpy(out.data(), t.data, out.size());
    return Status::ok();
  }
  return t.buffer->download(t.offset, out);
}

Status Engine::report_linears() {
  for (const auto& tap : linear_taps_) {
    const std::string_view name = model_.weights().name_of(tap.weight);
    const GraphTensor& x = graph_.tensor_at(tap.x);
    if (name.empty() || x.type != StorageType::F32) continue;
    if (auto st = read_tensor(x, tap_bytes_); !st) return st;
    const int64_t cols = x.ne[0];
    auto row_at = [&](int64_t i1, int64_t i2, int64_t i3) {
      return reinterpret_cast<const float*>(tap_bytes_.data() + i1 * x.nb[1] + i2 * x.nb[2] + i3 * x.nb[3]);
    };
    tap_rows_.clear();
    tap_experts_.clear();
    LinearInput li;
    li.weight = name;
    li.cols = cols;
    if (tap.ids < 0) {
      for (int64_t i3 = 0; i3 < x.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < x.ne[2]; ++i2)
          for (int64_t i1 = 0; i1 < x.ne[1]; ++i1) tap_rows_.insert(tap_rows_.end(), row_at(i1, i2, i3), row_at(i1, i2, i3) + cols);
    } else {
      // ids [k, n]: token t's slot s went to expert ids[s, t]; x is [cols, k or 1, n].
      const GraphTensor& ids = graph_.tensor_at(tap.ids);
      std::vector<std::byte> id_bytes;
      if (auto st = read_tensor(ids, id_bytes); !st) return st;
      const int64_t k = ids.ne[0], n = ids.ne[1];
      for (int64_t t = 0; t < n; ++t)
        for (int64_t slot = 0; slot < k; ++slot) {
          const float* r = row_at(slot % x.ne[1], t, 0);
          tap_rows_.insert(tap_rows_.end(), r, r + cols);
          int32_t e = 0;
          std::memcpy(&e, id_bytes.data() + slot * ids.nb[0] + t * ids.nb[1], sizeof e);
          tap_experts_.push_back(e);
        }
      li.n_experts = tap.weight->ne[2];
    }
    li.rows = static_cast<int64_t>(tap_rows_.size()) / std::max<int64_t>(cols, 1);
    li.x = tap_rows_;
    li.experts = tap_experts_;
    if (auto st = observer_(li); !st) return st;
  }
  return Status::ok();
}

}  // namespace sy::engine
