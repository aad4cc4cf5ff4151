#include "graph/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "graph/order.hpp"
#include "log/log.hpp"

namespace sy::graph {
namespace {

size_t tensor_bytes(const GraphTensor& t) { return static_cast<size_t>(t.nb[3] * t.ne[3]); }

uint64_t shape_key(const Graph& g, std::span<const GraphNode> nodes) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  auto tensor = [&](TensorId t) {
    const GraphTensor& x = g.tensor_at(t);
    mix(static_cast<uint64_t>(x.type));
    for (int d = 0; d < 4; ++d) mix(static_cast<uint64_t>(x.ne[d])), mix(static_cast<uint64_t>(x.nb[d]));
  };
  for (const GraphNode& n : nodes) {
    mix(static_cast<uint64_t>(n.op));
    tensor(n.dst);
    for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s) tensor(n.src[s]);
  }
  return h;
}

// The type a fallback is reported by: the persistent operand's, else the first non-f32 one.
StorageType reported_type(const Graph& g, const GraphNode& n, TensorId anchor) {
  if (anchor >= 0) return g.tensor_at(anchor).type;
  for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s)
    if (g.tensor_at(n.src[s]).type != StorageType::I32) return g.tensor_at(n.src[s]).type;
  return StorageType::F32;
}

}  // namespace

Scheduler::Scheduler(std::vector<Device*> devices, bool strict)
    : devices_(std::move(devices)), strict_(strict), log_(log::get("graph")) {
  for (size_t d = 0; d < devices_.size(); ++d) {
    info_.push_back(devices_[d]->info());
    if (host_ < 0 && info_.back().reads_host_memory) host_ = static_cast<int>(d);
  }
  busy_.assign(devices_.size(), false);
  waited_.assign(devices_.size(), 0);
  recorded_.assign(devices_.size(), 0);
  for (const DeviceInfo& i : info_) queues_.push_back(i.reads_host_memory ? 0 : 1);
  // SWITCHYARD_OVERLAP=0 queues nodes in graph order: the A/B for what overlap gains.
  const char* overlap = std::getenv("SWITCHYARD_OVERLAP");
  reorder_ = !(overlap && std::string_view(overlap) == "0");
  planners_.resize(devices_.size());
  arenas_.resize(devices_.size());
}

void Scheduler::note_fallback(const GraphNode& n, StorageType type, int from, int to, const char* why) {
  ++stats_.fallback_nodes;
  const uint64_t key = (static_cast<uint64_t>(n.op) << 40) ^ (static_cast<uint64_t>(type) << 16) ^
                       (static_cast<uint64_t>(from) << 8) ^ static_cast<uint64_t>(to);
  if (std::find(seen_fallbacks_.begin(), seen_fallbacks_.end(), key) != seen_fallbacks_.end()) return;
  seen_fallbacks_.push_back(key);
  ++stats_.distinct_fallbacks;
  log_->warn("fallback: {} cannot run {} on {} data ({}); it runs on {} instead",
                          info_[static_cast<size_t>(from)].name, op_name(n.op), storage_type_name(type), why,
                          info_[static_cast<size_t>(to)].name);
}

bool Scheduler::readable(int holder, int reader) const {
  if (holder == reader) return true;
  const DeviceInfo& r = info_[static_cast<size_t>(reader)];
  if (holder < 0) return r.reads_host_memory;  // plain host memory: the engine's inputs
  const DeviceInfo& h = info_[static_cast<size_t>(holder)];
  // Another device's memory is readable in place only by the host, and only when mapped.
  return r.reads_host_memory && (h.reads_host_memory || h.unified_memory);
}

TensorId Scheduler::mirror(Graph& g, TensorId base, int device) {
  for (const auto& m : mirrors_)
    if (m.base == base && m.device == device) return m.copy;
  const GraphTensor b = g.tensor_at(base);
  const TensorId copy = g.tensor(b.type, b.ne[0], b.ne[1], b.ne[2], b.ne[3]);
  tensor_device_.resize(g.infos().size(), -1);
  tensor_device_[static_cast<size_t>(copy)] = device;
  GraphNode t;
  t.op = OpKind::copy;
  t.dst = copy;
  t.src[0] = base;
  nodes_.push_back(t);
  node_device_.push_back(-1 - device);
  mirrors_.push_back({base, device, copy});
  return copy;
}

int Scheduler::producer_device(const Graph& g, const GraphNode& n) const {
  // Of the devices that made its sources, a GPU before the host (whatever the pipeline's
  // order), then the earliest in pipeline order: the residual stream stays on the GPU
  // between layers (ggml's scheduler likewise expands GPU runs over nodes without weights).
  int best = -1;
  auto rank = [&](int d) { return (d == host_ ? 1000 : 0) + d; };
  for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s) {
    const int c = tensor_device_[static_cast<size_t>(g.base(n.src[s]))];
    if (c >= 0 && (best < 0 || rank(c) < rank(best))) best = c;
  }
  if (best >= 0) return best;
  return host_ >= 0 ? host_ : 0;  // only host inputs
}

int Scheduler::choose(const Graph& g, const GraphNode& n, int preferred) {
  const std::span<const GraphTensor> tensors(g.tensors());
  const Support own = devices_[static_cast<size_t>(preferred)]->supports(n, tensors);
  if (own != Support::no) return preferred;
  // The first device that runs it well, else the first that can.
  int chosen = -1, reluctant = -1;
  for (size_t d = 0; d < devices_.size() && chosen < 0; ++d) {
    if (static_cast<int>(d) == preferred) continue;
    const Support s = devices_[d]->supports(n, tensors);
    if (s == Support::yes) chosen = static_cast<int>(d);
    else if (s == Support::prefer_not && reluctant < 0) reluctant = static_cast<int>(d);
  }
  if (chosen < 0) chosen = reluctant;
  return chosen;
}

Status Scheduler::assign(Graph& g) {
  const size_t n_graph = g.nodes().size();
  nodes_.clear();
  node_device_.clear();
  mirrors_.clear();
  tensor_device_.assign(g.infos().size(), -1);
  for (size_t t = 0; t < g.infos().size(); ++t)
    if (g.info(static_cast<TensorId>(t)).origin == Origin::persistent) tensor_device_[t] = g.info(static_cast<TensorId>(t)).device;
  for (size_t i = 0; i < n_graph; ++i) {
    GraphNode n = g.nodes()[i];  // a copy: sources may be redirected to mirrors
    // Placement: the persistent tensor the node writes or reads (weights, a cache), else
    // the device that produced its first source, else the host (only host inputs).
    TensorId anchor = -1;
    if (g.info(g.base(n.dst)).origin == Origin::persistent) anchor = g.base(n.dst);
    // A cache or recurrent state the op updates in place outranks its weights: it cannot
    // move, and a weight elsewhere may still be readable (llama.cpp runs these with the KV).
    if (const int s = in_place_source(n.op); anchor < 0 && s >= 0 && n.src[s] >= 0 &&
                                          g.info(g.base(n.src[s])).origin == Origin::persistent)
      anchor = g.base(n.src[s]);
    for (int s = 0; s < kMaxSources && n.src[s] >= 0 && anchor < 0; ++s)
      if (g.info(g.base(n.src[s])).origin == Origin::persistent) anchor = g.base(n.src[s]);
    int preferred = anchor >= 0 ? g.info(anchor).device : producer_device(g, n);
    const StorageType type = reported_type(g, n, anchor);
    const int chosen = choose(g, n, preferred);
    if (chosen < 0)
      return error::unsupported("no backend of this pipeline can run " + std::string(op_name(n.op)) + " on " +
                                std::string(storage_type_name(type)) + " data; add the cpu backend to `backends`");
    if (chosen != preferred) {
      if (strict_)
        return error::unsupported(info_[static_cast<size_t>(preferred)].name + " cannot run " +
                                  std::string(op_name(n.op)) + " on " + std::string(storage_type_name(type)) +
                                  " data and `strict: true` forbids falling back to " +
                                  info_[static_cast<size_t>(chosen)].name);
      note_fallback(n, type, preferred, chosen, anchor >= 0 ? "where its weights or cache live" : "where its input was made");
    }
    // Sources the chosen device cannot read are copied to it (one copy per step).
    for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s) {
      const TensorId b = g.base(n.src[s]);
      const int holder = tensor_device_[static_cast<size_t>(b)];
      if (readable(holder, chosen)) continue;
      if (g.info(b).origin == Origin::persistent)
        return error::unsupported(std::string(op_name(n.op)) + " runs on " + info_[static_cast<size_t>(chosen)].name +
                                  " but reads a weight or cache held by " + info_[static_cast<size_t>(holder)].name +
                                  ", which it cannot read; weights are not copied per step, so place that tensor on " +
                                  info_[static_cast<size_t>(chosen)].name + " (placement.overrides) or keep " +
                                  std::string(op_name(n.op)) + " with it");
      log_->trace("{} on {} reads source {} from {}", op_name(n.op), info_[static_cast<size_t>(chosen)].name, s,
                               holder < 0 ? "host" : info_[static_cast<size_t>(holder)].name);
      const TensorId m = mirror(g, b, chosen);
      if (n.src[s] == b) {
        n.src[s] = m;
        continue;
      }
      size_t offset = 0;  // of the view within its base
      for (TensorId t = n.src[s]; g.info(t).origin == Origin::view; t = g.info(t).view_of) offset += g.info(t).view_offset;
      const GraphTensor v = g.tensor_at(n.src[s]);
      n.src[s] = g.view(m, {v.ne[0], v.ne[1], v.ne[2], v.ne[3]}, {v.nb[1], v.nb[2], v.nb[3]}, offset);
      tensor_device_.resize(g.infos().size(), -1);
    }
    const TensorId db = g.base(n.dst);
    const int holder = tensor_device_[static_cast<size_t>(db)];
    if (holder >= 0 && holder != chosen && !readable(holder, chosen))
      return error::unsupported(std::string(op_name(n.op)) + " on " + info_[static_cast<size_t>(chosen)].name +
                                " writes into memory held by " + info_[static_cast<size_t>(holder)].name +
                                "; keep the KV cache on a device that runs attention");
    if (holder < 0) tensor_device_[static_cast<size_t>(db)] = chosen;
    // Copies made earlier in the step no longer match what this node writes.
    std::erase_if(mirrors_, [&](const Mirror& m) { return m.base == db; });
    nodes_.push_back(n);
    node_device_.push_back(chosen);
  }
  return Status::ok();
}

Status Scheduler::allocate(Graph& g) {
  const auto& nodes = nodes_;
  const size_t nt = g.infos().size();
  last_use_.assign(nt, -1);
  offset_.assign(nt, SIZE_MAX);
  for (size_t i = 0; i < nodes.size(); ++i) {
    last_use_[static_cast<size_t>(g.base(nodes[i].dst))] = static_cast<int32_t>(i);
    for (int s = 0; s < kMaxSources && nodes[i].src[s] >= 0; ++s)
      last_use_[static_cast<size_t>(g.base(nodes[i].src[s]))] = static_cast<int32_t>(i);
  }
  for (auto& p : planners_) p.reset();
  auto intermediate = [&](TensorId t) { return g.info(t).origin == Origin::intermediate; };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const TensorId db = g.base(nodes[i].dst);
    const auto dev = static_cast<size_t>(tensor_device_[static_cast<size_t>(db)]);
    if (intermediate(db) && offset_[static_cast<size_t>(db)] == SIZE_MAX)
      offset_[static_cast<size_t>(db)] = planners_[dev].alloc(tensor_bytes(g.tensor_at(db)));
    auto release = [&](TensorId b) {
      if (!intermediate(b) || g.info(b).output || last_use_[static_cast<size_t>(b)] != static_cast<int32_t>(i)) return;
      if (offset_[static_cast<size_t>(b)] == SIZE_MAX) return;
      planners_[static_cast<size_t>(tensor_device_[static_cast<size_t>(b)])].release(offset_[static_cast<size_t>(b)],
                                                                                      tensor_bytes(g.tensor_at(b)));
      last_use_[static_cast<size_t>(b)] = -2;  // released once
    };
    for (int s = 0; s < kMaxSources && nodes[i].src[s] >= 0; ++s) release(g.base(nodes[i].src[s]));
    release(db);
  }
  stats_.arena_bytes = 0;
  stats_.arena_peak_bytes = 0;
  for (size_t d = 0; d < devices_.size(); ++d) {
    const size_t need = planners_[d].peak();
    stats_.arena_peak_bytes += need;
    if (need > 0 && (!arenas_[d] || arenas_[d]->size() < need)) {
      arenas_[d].reset();
      constexpr size_t kMiB = 1u << 20;
      auto buf = devices_[d]->allocate((need + kMiB - 1) / kMiB * kMiB, BufferKind::device_local);
      if (!buf) return buf.status();
      arenas_[d] = std::move(*buf);
    }
    if (arenas_[d]) stats_.arena_bytes += arenas_[d]->size();
  }
  auto& ts = g.tensors();
  for (size_t t = 0; t < nt; ++t) {
    const TensorInfo& info = g.info(static_cast<TensorId>(t));
    if (info.origin == Origin::intermediate) {
      if (offset_[t] == SIZE_MAX) continue;  // never written: unused
      Buffer* arena = arenas_[static_cast<size_t>(tensor_device_[t])].get();
      ts[t].buffer = arena;
      ts[t].offset = offset_[t];
      ts[t].data = arena->host_data() ? static_cast<std::byte*>(arena->host_data()) + offset_[t] : nullptr;
    } else if (info.origin == Origin::view) {
      const GraphTensor& src = ts[static_cast<size_t>(info.view_of)];
      ts[t].buffer = src.buffer;
      ts[t].offset = src.offset + info.view_offset;
      ts[t].data = src.data ? static_cast<std::byte*>(src.data) + info.view_offset : nullptr;
    }
  }
  return Status::ok();
}

Status Scheduler::wait(int device) {
  if (device < 0 || !busy_[static_cast<size_t>(device)]) return Status::ok();
  const auto d = static_cast<size_t>(device);
  busy_[d] = false;
  if (recorded_[d] != UINT64_MAX) waited_[d] = recorded_[d];
  return devices_[d]->synchronize();
}

void Scheduler::note_ready(int device, TensorId base) {
  const auto d = static_cast<size_t>(device);
  if (last_event_device_ != device || last_event_stale_) {
    recorded_[d] = devices_[d]->record_event();
    last_event_device_ = device;
    last_event_stale_ = false;
  }
  ready_device_[static_cast<size_t>(base)] = device;
  ready_event_[static_cast<size_t>(base)] = recorded_[d];
}

Status Scheduler::wait_ready(TensorId base) {
  const int d = ready_device_[static_cast<size_t>(base)];
  if (d < 0) return Status::ok();
  const auto du = static_cast<size_t>(d);
  const uint64_t ev = ready_event_[static_cast<size_t>(base)];
  if (ev == 0) return wait(d);  // a device without events: all of it
  // UINT64_MAX is a device's failed event: its wait reports the failure.
  if (ev != UINT64_MAX) {
    if (waited_[du] >= ev) return Status::ok();
    waited_[du] = ev;
  }
  return devices_[du]->wait_event(ev);
}

Status Scheduler::wait_inputs(const Graph& g, size_t first, size_t last) {
  for (size_t i = first; i < last; ++i) {
    const GraphNode& n = nodes_[i];
    if (auto st = wait_ready(g.base(n.dst)); !st) return st;
    for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s)
      if (auto st = wait_ready(g.base(n.src[s])); !st) return st;
  }
  return Status::ok();
}

Status Scheduler::wait_all() {
  for (size_t d = 0; d < devices_.size(); ++d)
    if (auto st = wait(static_cast<int>(d)); !st) return st;
  return Status::ok();
}

Status Scheduler::transfer(Graph& g, const GraphNode& n, int to) {
  const GraphTensor& src = g.tensor_at(n.src[0]);
  const GraphTensor& dst = g.tensor_at(n.dst);
  const int from = tensor_device_[static_cast<size_t>(g.base(n.src[0]))];
  const size_t bytes = tensor_bytes(src);
  ++stats_.transfers;
  stats_.transfer_bytes += bytes;
  stats_.last_step_transfer_bytes += bytes;
  Device& dev = *devices_[static_cast<size_t>(to)];
  log_->trace("copy of {} bytes from {} to {} for {}", bytes, from < 0 ? "host" : info_[static_cast<size_t>(from)].name,
                           info_[static_cast<size_t>(to)].name, op_name(n.op));
  const bool to_host = info_[static_cast<size_t>(to)].reads_host_memory;
  if (src.data) {
    // The host reads the source in place once its producer finished.
    if (auto st = ready_device_[static_cast<size_t>(g.base(n.src[0]))] >= 0 ? wait_ready(g.base(n.src[0])) : wait(from); !st)
      return st;
    if (to_host) {
      std::memcpy(dst.data, src.data, bytes);
      return Status::ok();
    }
    busy_[static_cast<size_t>(to)] = true;
    return dev.copy_to_device(*dst.buffer, dst.offset, {static_cast<const std::byte*>(src.data), bytes});
  }
  Device& owner = *devices_[static_cast<size_t>(from)];
  if (to_host) {
    // Into host memory the destination reads; it waits for the owner before it runs.
    busy_[static_cast<size_t>(from)] = true;
    last_event_stale_ = true;
    if (auto st = owner.copy_to_host(*src.buffer, src.offset, {static_cast<std::byte*>(dst.data), bytes}); !st) return st;
    // The host waits for this copy only, not for device work queued after it.
    note_ready(from, g.base(n.dst));
    return Status::ok();
  }
  // Between two devices that share no memory: through the host.
  if (staging_.size() < bytes) staging_.resize(bytes);
  const std::span<std::byte> stage(staging_.data(), bytes);
  if (auto st = owner.copy_to_host(*src.buffer, src.offset, stage); !st) return st;
  busy_[static_cast<size_t>(from)] = true;
  if (auto st = wait(from); !st) return st;
  busy_[static_cast<size_t>(to)] = true;
  return dev.copy_to_device(*dst.buffer, dst.offset, stage);
}

Status Scheduler::plan(Graph& g) {
  // A probe, not a step: only the fallbacks it found (logged now, once) stay counted.
  const SchedulerStats before = stats_;
  auto st = assign(g);
  const int64_t distinct = stats_.distinct_fallbacks;
  stats_ = before;
  stats_.distinct_fallbacks = distinct;
  return st;
}

Status Scheduler::run(Graph& g) {
  auto st = run_queued(g);
  // Also after an error: queued work may still write host memory (a copy out into an
  // arena) that the next step would reallocate.
  const Status waited = wait_all();
  return st ? waited : st;
}

Status Scheduler::run_queued(Graph& g) {
  if (auto st = assign(g); !st) return st;
  if (reorder_) order_.apply(g, nodes_, node_device_, queues_);
  if (auto st = allocate(g); !st) return st;
  ++stats_.steps;
  stats_.last_step_transfer_bytes = 0;
  mark_host_reads(g);
  size_t first = 0;
  while (first < nodes_.size()) {
    if (node_device_[first] < 0) {
      if (profile_) {
        if (auto st = profiled_transfer(g, first); !st) return st;
      } else if (auto st = transfer(g, nodes_[first], -1 - node_device_[first]); !st) {
        return st;
      }
      ++first;
      continue;
    }
    size_t last = first + 1;
    while (last < nodes_.size() && node_device_[last] == node_device_[first]) ++last;
    const int d = node_device_[first];
    // A device that reads host memory reads what the others wrote there: the work that
    // made its inputs finishes first (only that: later work stays queued and overlaps).
    if (info_[static_cast<size_t>(d)].reads_host_memory)
      if (auto st = wait_inputs(g, first, last); !st) return st;
    if (profile_) {
      if (auto st = profiled_run(g, first, last); !st) return st;
      first = last;
      continue;
    }
    const auto span = std::span<const GraphNode>(nodes_).subspan(first, last - first);
    SubGraph sg{g.tensors(), span, shape_key(g, span)};
    busy_[static_cast<size_t>(d)] = true;
    last_event_stale_ = true;
    if (auto st = devices_[static_cast<size_t>(d)]->execute(sg); !st) return st;
    if (queues_[static_cast<size_t>(d)])
      for (const GraphNode& n : span)
        if (host_reads_[static_cast<size_t>(g.base(n.dst))]) note_ready(d, g.base(n.dst));
    first = last;
  }
  return Status::ok();
}

void Scheduler::mark_host_reads(const Graph& g) {
  const size_t nt = g.infos().size();
  host_reads_.assign(nt, 0);
  ready_device_.assign(nt, -1);
  ready_event_.assign(nt, 0);
  last_event_device_ = -1;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const GraphNode& n = nodes_[i];
    const int d = node_device_[i];
    if (d < 0) {
      // A copy from memory the host reads in place.
      if (g.tensor_at(n.src[0]).data) host_reads_[static_cast<size_t>(g.base(n.src[0]))] = 1;
      continue;
    }
    if (!info_[static_cast<size_t>(d)].reads_host_memory) continue;
    host_reads_[static_cast<size_t>(g.base(n.dst))] = 1;
    for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s) host_reads_[static_cast<size_t>(g.base(n.src[s]))] = 1;
  }
}

int64_t Scheduler::elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count();
}

Status Scheduler::profiled_transfer(Graph& g, size_t i) {
  const GraphNode& n = nodes_[i];
  const int to = -1 - node_device_[i];
  const size_t bytes = tensor_bytes(g.tensor_at(n.src[0]));
  const auto t0 = std::chrono::steady_clock::now();
  if (auto st = transfer(g, n, to); !st) return st;
  // Both ends finish inside the timed span: the copy's cost is its own.
  if (auto st = wait_all(); !st) return st;
  profile_->add(kTransferOp, g.tensor_at(n.src[0]).type, to, info_[static_cast<size_t>(to)].name, elapsed_ns(t0), bytes);
  return Status::ok();
}

Status Scheduler::profiled_run(Graph& g, size_t first, size_t last) {
  const int d = node_device_[first];
  Device& dev = *devices_[static_cast<size_t>(d)];
  const std::span<const GraphTensor> tensors(g.tensors());
  for (size_t i = first; i < last; ++i) {
    const auto one = std::span<const GraphNode>(nodes_).subspan(i, 1);
    SubGraph sg{g.tensors(), one, shape_key(g, one)};
    const auto t0 = std::chrono::steady_clock::now();
    busy_[static_cast<size_t>(d)] = true;
    if (auto st = dev.execute(sg); !st) return st;
    if (auto st = wait(d); !st) return st;
    const int64_t ns = elapsed_ns(t0);
    const GraphNode& n = nodes_[i];
    profile_->add(op_name(n.op), deciding_type(n, tensors), d, info_[static_cast<size_t>(d)].name, ns,
                  weight_bytes_read(n, tensors), matmul_flops(n, tensors));
  }
  return Status::ok();
}

}  // namespace sy::graph
