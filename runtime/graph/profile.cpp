#include "graph/profile.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace sy::graph {

void OpProfile::add(std::string_view op, StorageType type, int device, std::string_view device_name, int64_t ns,
                    uint64_t weight_bytes, uint64_t flops) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const OpProfileEntry& e) {
    return e.op == op && e.type == type && e.device == device;
  });
  if (it == entries_.end()) {
    OpProfileEntry e;
    e.op = std::string(op);
    e.type = type;
    e.device = device;
    e.device_name = std::string(device_name);
    entries_.push_back(std::move(e));
    it = entries_.end() - 1;
  }
  ++it->nodes;
  it->ns += ns;
  it->weight_bytes += weight_bytes;
  it->flops += flops;
}

int64_t OpProfile::total_ns() const {
  int64_t t = 0;
  for (const auto& e : entries_) t += e.ns;
  return t;
}

int64_t OpProfile::total_nodes() const {
  int64_t t = 0;
  for (const auto& e : entries_) t += e.nodes;
  return t;
}

int64_t OpProfile::nodes_of(std::string_view op) const {
  int64_t t = 0;
  for (const auto& e : entries_)
    if (e.op == op) t += e.nodes;
  return t;
}

StorageType deciding_type(const GraphNode& n, std::span<const GraphTensor> t) {
  const auto type = [&](int32_t i) { return t[static_cast<size_t>(i)].type; };
  switch (n.op) {
    case OpKind::matmul:
    case OpKind::matmul_id:
    case OpKind::get_rows: return type(n.src[0]);
    case OpKind::attention: return type(n.src[1]);
    case OpKind::set_rows: return type(n.dst);
    default: break;
  }
  for (int s = 0; s < kMaxSources && n.src[s] >= 0; ++s)
    if (type(n.src[s]) != StorageType::F32 && type(n.src[s]) != StorageType::I32) return type(n.src[s]);
  return StorageType::F32;
}

uint64_t weight_bytes_read(const GraphNode& n, std::span<const GraphTensor> t) {
  if (n.src[0] < 0) return 0;
  const GraphTensor& w = t[static_cast<size_t>(n.src[0])];
  switch (n.op) {
    case OpKind::matmul: return static_cast<uint64_t>(w.nb[3] * w.ne[3]);
    case OpKind::matmul_id: {
      const auto n_expert = static_cast<size_t>(w.ne[2]);
      const auto expert_bytes = static_cast<uint64_t>(w.nb[2]);
      const GraphTensor& ids = t[static_cast<size_t>(n.src[2])];
      // Ids the host cannot read (on a GPU): count every expert, an upper bound.
      if (ids.type != StorageType::I32 || !ids.data) return expert_bytes * n_expert;
      // ids [used, tokens] may be a strided view; each expert's matrix is read once however
      // many tokens chose it.
      std::vector<bool> used(n_expert, false);
      for (int64_t j = 0; j < ids.ne[1]; ++j)
        for (int64_t i = 0; i < ids.ne[0]; ++i) {
          int32_t e = 0;
          std::memcpy(&e, static_cast<const std::byte*>(ids.data) + j * ids.nb[1] + i * ids.nb[0], sizeof e);
          if (e >= 0 && static_cast<size_t>(e) < n_expert) used[static_cast<size_t>(e)] = true;
        }
      return expert_bytes * static_cast<uint64_t>(std::count(used.begin(), used.end(), true));
    }
    case OpKind::get_rows: {
      const GraphTensor& ids = t[static_cast<size_t>(n.src[1])];
      return static_cast<uint64_t>(w.nb[1]) * static_cast<uint64_t>(ids.elements());
    }
    default: return 0;
  }
}

uint64_t matmul_flops(const GraphNode& n, std::span<const GraphTensor> t) {
  if (n.op != OpKind::matmul && n.op != OpKind::matmul_id) return 0;
  const GraphTensor& w = t[static_cast<size_t>(n.src[0])];
  return 2 * static_cast<uint64_t>(w.ne[0]) * static_cast<uint64_t>(t[static_cast<size_t>(n.dst)].elements());
}

}  // namespace sy::graph
