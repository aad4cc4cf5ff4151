#include "graph/scheduler.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "log/log.hpp"

namespace sy::graph {
namespace {

size_t tensor_bytes(const GraphTensor& t) { return static_cast<size_t>(t.nb[3] * t.ne[3]); }

uint64_t shape_key(const Graph& g, std::span<const GraphNode> nodes) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const GraphNode& n : nodes) {
    mix(static_cast<uint64_t>(n.op));
    for (int d = 0; d < 4; ++d) mix(static_cast<uint64_t>(g.tensor_at(n.dst).ne[d]));
  }
  return h;
}

}  // namespace

Scheduler::Scheduler(std::vector<Device*> devices, bool strict) : devices_(std::move(devices)), strict_(strict) {
  for (auto* d : devices_) host_visible_.push_back(d->info().host_visible);
  planners_.resize(devices_.size());
  arenas_.resize(devices_.size());
}

void Scheduler::note_fallback(const GraphNode& n, StorageType type, int from, int to) {
  ++stats_.fallback_nodes;
  const uint64_t key = (static_cast<uint64_t>(n.op) << 40) ^ (static_cast<uint64_t>(type) << 16) ^
                       (static_cast<uint64_t>(from) << 8) ^ static_cast<uint64_t>(to);
  if (std::find(seen_fallbacks_.begin(), seen_fallbacks_.end(), key) != seen_fallbacks_.end()) return;
  seen_fallbacks_.push_back(key);
  ++stats_.distinct_fallbacks;
  log::get("graph")->warn("fallback: {} does not run {} on {} data; it runs on {} instead",
                          devices_[static_cast<size_t>(from)]->info().name, op_name(n.op), storage_type_name(type),
                          devices_[static_cast<size_t>(to)]->info().name);
}

bool Scheduler::readable(int holder, int reader) const {
  if (holder == reader) return true;
  // Host memory (inputs, or a host-visible device's buffers) is readable by host-visible devices.
  const bool host_memory = holder < 0 || host_visible_[static_cast<size_t>(holder)];
  return host_memory && host_visible_[static_cast<size_t>(reader)];
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
  node_device_.push_back(-1);
  mirrors_.push_back({base, device, copy});
  return copy;
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
    // The tensor that decides placement: weights (or a cache) the node reads or writes.
    TensorId anchor = -1;
    if (g.info(g.base(n.dst)).origin == Origin::persistent) anchor = g.base(n.dst);
    for (int s = 0; s < kMaxSources && n.src[s] >= 0 && anchor < 0; ++s)
      if (g.info(g.base(n.src[s])).origin == Origin::persistent) anchor = g.base(n.src[s]);
    const StorageType type = anchor >= 0 ? g.tensor_at(anchor).type : StorageType::F32;
    const int preferred = anchor >= 0 ? g.info(anchor).device : 0;
    int chosen = -1;
    if (devices_[static_cast<size_t>(preferred)]->supports(n.op, type)) {
      chosen = preferred;
    } else {
      for (size_t d = 0; d < devices_.size() && chosen < 0; ++d)
        if (devices_[d]->supports(n.op, type)) chosen = static_cast<int>(d);
      if (chosen < 0)
        return error::unsupported("no backend of this pipeline can run " + std::string(op_name(n.op)) + " on " +
                                  std::string(storage_type_name(type)) + " data; add the cpu backend to `backends`");
      if (strict_)
        return error::unsupported(devices_[static_cast<size_t>(preferred)]->info().name + " cannot run " +
                                  std::string(op_name(n.op)) + " on " + std::string(storage_type_name(type)) +
                                  " data and `strict: true` forbids falling back to " +
                                  devices_[static_cast<size_t>(chosen)]->info().name);
      note_fallback(n, type, preferred, chosen);
    }
    // Sources the chosen device cannot read are copied to it (one copy per step).
    for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s) {
      const TensorId b = g.base(n.src[s]);
      if (readable(tensor_device_[static_cast<size_t>(b)], chosen)) continue;
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
      return error::unsupported(std::string(op_name(n.op)) + " on " + devices_[static_cast<size_t>(chosen)]->info().name +
                                " writes into memory held by " + devices_[static_cast<size_t>(holder)]->info().name +
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
      auto buf = devices_[d]->allocate((need + kMiB - 1) / kMiB * kMiB);
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

Status Scheduler::transfer(Graph& g, const GraphNode& n) {
  const GraphTensor& src = g.tensor_at(n.src[0]);
  const GraphTensor& dst = g.tensor_at(n.dst);
  const size_t bytes = tensor_bytes(src);
  ++stats_.transfers;
  stats_.transfer_bytes += bytes;
  if (src.data && dst.data) {
    std::memcpy(dst.data, src.data, bytes);
    return Status::ok();
  }
  if (src.data) return dst.buffer->upload(dst.offset, {static_cast<const std::byte*>(src.data), bytes});
  if (staging_.size() < bytes) staging_.resize(bytes);
  const std::span<std::byte> stage(staging_.data(), bytes);
  if (auto st = src.buffer->download(src.offset, stage); !st) return st;
  if (dst.data) {
    std::memcpy(dst.data, staging_.data(), bytes);
    return Status::ok();
  }
  return dst.buffer->upload(dst.offset, stage);
}

Status Scheduler::run(Graph& g) {
  if (auto st = assign(g); !st) return st;
  if (auto st = allocate(g); !st) return st;
  ++stats_.steps;
  size_t first = 0;
  while (first < nodes_.size()) {
    if (node_device_[first] < 0) {
      if (auto st = transfer(g, nodes_[first]); !st) return st;
      ++first;
      continue;
    }
    size_t last = first + 1;
    while (last < nodes_.size() && node_device_[last] == node_device_[first]) ++last;
    const auto span = std::span<const GraphNode>(nodes_).subspan(first, last - first);
    SubGraph sg{g.tensors(), span, shape_key(g, span)};
    if (auto st = devices_[static_cast<size_t>(node_device_[first])]->execute(sg); !st) return st;
    first = last;
  }
  return Status::ok();
}

}  // namespace sy::graph
