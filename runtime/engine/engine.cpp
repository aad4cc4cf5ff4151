#include "engine/engine.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace sy::engine {

Engine::Engine(const model::Model& m, std::vector<Device*> devices, const EngineConfig& cfg)
    : model_(m), cfg_(cfg), sched_(std::move(devices), cfg.strict) {}

Result<std::unique_ptr<Engine>> Engine::create(const model::Model& m, std::vector<Device*> devices,
                                               const EngineConfig& cfg) {
  if (devices.empty()) return error::invalid_argument("the engine needs at least one device");
  if (cfg.ubatch < 1) return error::invalid_argument("context.ubatch must be at least 1");
  std::vector<int> layer_device;
  for (int64_t il = 0; il < m.hparams().n_layer; ++il) layer_device.push_back(m.layer_device(il));
  auto kv = kv::KvCache::create(m.hparams(), devices, layer_device, cfg.kv);
  if (!kv) return kv.status();
  std::unique_ptr<Engine> e(new Engine(m, std::move(devices), cfg));
  e->kv_ = std::move(*kv);
  const auto n = static_cast<size_t>(cfg.ubatch);
  for (auto* v : {&e->tokens_, &e->positions_, &e->cells_, &e->rows_, &e->slots_, &e->outs_}) v->reserve(n);
  if (auto st = e->check_placement(); !st) return st;
  return e;
}

Status Engine::check_placement() {
  // A one-token step of a sequence that is not there: only shapes matter for placement.
  const int32_t zero = 0;
  const std::vector<int32_t> table(static_cast<size_t>(kv_->table_blocks() * kv_->config().n_seq_max), 0);
  model::StepInputs in;
  in.n_tokens = in.n_outputs = 1;
  in.tokens = in.positions = in.kv_slots = in.seq_rows = in.state_slots = in.out_rows = &zero;
  in.block_tables = table.data();
  in.table_blocks = kv_->table_blocks();
  in.table_rows = kv_->config().n_seq_max;
  in.block_size = kv_->config().block_size;
  in.k_cache = kv_->k();
  in.v_cache = kv_->v();
  in.conv_state = kv_->conv();
  in.delta_state = kv_->delta();
  in.kv_device = kv_->kv_devices();
  in.state_device = kv_->state_devices();
  graph_.clear();
  model_.architecture().build(graph_, in);
  auto st = sched_.plan(graph_);
  graph_.clear();
  return st;
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
  logits.resize(n_out * static_cast<size_t>(n_vocab()));
  size_t done_out = 0;
  for (size_t first = 0; first < batch.size(); first += static_cast<size_t>(cfg_.ubatch)) {
    const auto part = batch.subspan(first, std::min(batch.size() - first, static_cast<size_t>(cfg_.ubatch)));
    if (auto st = ubatch(part, logits.data() + done_out * static_cast<size_t>(n_vocab())); !st) return st;
    for (const auto& t : part) done_out += t.logits ? 1 : 0;
  }
  return Status::ok();
}

Status Engine::ubatch(std::span<const BatchToken> batch, float* logits) {
  const auto n = batch.size();
  for (auto* v : {&tokens_, &positions_, &cells_, &rows_, &slots_}) v->resize(n);
  outs_.clear();
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && batch[j].seq == batch[i].seq) ++j;
    const int32_t seq = batch[i].seq;
    const int64_t start = kv_->length(seq);
    if (start < 0) return error::not_found("sequence " + std::to_string(seq) + " was not added to the KV cache");
    if (auto st = kv_->extend(seq, static_cast<int64_t>(j - i), cells_.data() + i); !st) return st;
    const int32_t row = kv_->row(seq);
    for (size_t k = i; k < j; ++k) {
      tokens_[k] = batch[k].id;
      positions_[k] = static_cast<int32_t>(start + static_cast<int64_t>(k - i));
      rows_[k] = row;
      slots_[k] = row;
      if (batch[k].logits) outs_.push_back(static_cast<int32_t>(k));
    }
    i = j;
  }
  model::StepInputs in;
  in.n_tokens = static_cast<int64_t>(n);
  in.n_outputs = static_cast<int64_t>(outs_.size());
  in.tokens = tokens_.data();
  in.positions = positions_.data();
  in.kv_slots = cells_.data();
  in.seq_rows = rows_.data();
  in.state_slots = slots_.data();
  in.out_rows = outs_.data();
  in.block_tables = kv_->tables();
  in.table_blocks = kv_->table_blocks();
  in.table_rows = kv_->config().n_seq_max;
  in.block_size = kv_->config().block_size;
  in.k_cache = kv_->k();
  in.v_cache = kv_->v();
  in.conv_state = kv_->conv();
  in.delta_state = kv_->delta();
  in.kv_device = kv_->kv_devices();
  in.state_device = kv_->state_devices();
  in.tap_routing = cfg_.routing_stats;
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

}  // namespace sy::engine
