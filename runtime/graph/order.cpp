#include "graph/order.hpp"

#include <algorithm>
#include <functional>

namespace sy::graph {
namespace {

// Persistent memory by the allocation it lives in: two tensors of one cache (K and an MLA
// V viewing it) are one resource.
const void* memory_key(const GraphTensor& t) { return t.buffer ? static_cast<const void*>(t.buffer) : t.data; }

}  // namespace

int in_place_source(OpKind op) {
  switch (op) {
    case OpKind::attention: return 1;  // the K cache
    case OpKind::conv1d: return 2;
    case OpKind::delta_net: return 5;
    default: return -1;
  }
}

int32_t OverlapOrder::resource(const Graph& g, TensorId t) const {
  const TensorId b = g.base(t);
  if (g.info(b).origin != Origin::persistent) return b;
  // Weights nobody writes order nothing.
  const void* key = memory_key(g.tensor_at(b));
  const auto it = std::lower_bound(written_memory_.begin(), written_memory_.end(), key);
  if (it == written_memory_.end() || *it != key) return -1;
  return static_cast<int32_t>(g.infos().size() + static_cast<size_t>(it - written_memory_.begin()));
}

void OverlapOrder::depend(int32_t from, int32_t to) {
  if (from >= 0 && from != to) edges_.emplace_back(from, to);
}

bool OverlapOrder::apply(const Graph& g, std::vector<GraphNode>& nodes, std::vector<int>& device,
                         std::span<const uint8_t> queues) {
  const auto n = static_cast<int32_t>(nodes.size());
  auto queued = [&](int32_t i) {
    const int d = device[static_cast<size_t>(i)];
    return d < 0 || queues[static_cast<size_t>(d)] != 0;
  };
  // Nothing to gain unless both kinds are present.
  bool any_queued = false, any_host = false;
  for (int32_t i = 0; i < n; ++i) (queued(i) ? any_queued : any_host) = true;
  if (!any_queued || !any_host) return false;

  auto written = [&](const GraphNode& x, auto&& fn) {
    fn(x.dst);
    if (const int s = in_place_source(x.op); s >= 0 && x.src[s] >= 0) fn(x.src[s]);
  };
  written_memory_.clear();
  for (const GraphNode& x : nodes)
    written(x, [&](TensorId t) {
      const TensorId b = g.base(t);
      if (g.info(b).origin == Origin::persistent) written_memory_.push_back(memory_key(g.tensor_at(b)));
    });
  std::sort(written_memory_.begin(), written_memory_.end(), std::less<>());
  written_memory_.erase(std::unique(written_memory_.begin(), written_memory_.end()), written_memory_.end());

  const size_t n_res = g.infos().size() + written_memory_.size();
  last_writer_.assign(n_res, -1);
  readers_head_.assign(n_res, -1);
  readers_.clear();
  edges_.clear();
  for (int32_t i = 0; i < n; ++i) {
    const GraphNode& x = nodes[static_cast<size_t>(i)];
    for (int s = 0; s < kMaxSources && x.src[s] >= 0; ++s) {
      const int32_t r = resource(g, x.src[s]);
      if (r < 0) continue;
      depend(last_writer_[static_cast<size_t>(r)], i);
      readers_.emplace_back(i, readers_head_[static_cast<size_t>(r)]);
      readers_head_[static_cast<size_t>(r)] = static_cast<int32_t>(readers_.size() - 1);
    }
    written(x, [&](TensorId t) {
      const int32_t r = resource(g, t);
      if (r < 0) return;
      const auto ri = static_cast<size_t>(r);
      depend(last_writer_[ri], i);
      for (int32_t e = readers_head_[ri]; e >= 0; e = readers_[static_cast<size_t>(e)].second)
        depend(readers_[static_cast<size_t>(e)].first, i);
      readers_head_[ri] = -1;
      last_writer_[ri] = i;
    });
  }

  // Successor lists (CSR) and in-degrees.
  succ_begin_.assign(static_cast<size_t>(n) + 1, 0);
  indegree_.assign(static_cast<size_t>(n), 0);
  for (const auto& [from, to] : edges_) {
    ++succ_begin_[static_cast<size_t>(from) + 1];
    ++indegree_[static_cast<size_t>(to)];
  }
  for (int32_t i = 0; i < n; ++i) succ_begin_[static_cast<size_t>(i) + 1] += succ_begin_[static_cast<size_t>(i)];
  succ_.resize(edges_.size());
  order_.assign(succ_begin_.begin(), succ_begin_.end() - 1);  // fill cursors
  for (const auto& [from, to] : edges_) succ_[static_cast<size_t>(order_[static_cast<size_t>(from)]++)] = to;

  // Kahn's algorithm with two min-heaps on graph position: queued work first.
  ready_queued_.clear();
  ready_host_.clear();
  const auto later = std::greater<>();
  auto push = [&](int32_t i) {
    auto& h = queued(i) ? ready_queued_ : ready_host_;
    h.push_back(i);
    std::push_heap(h.begin(), h.end(), later);
  };
  for (int32_t i = 0; i < n; ++i)
    if (indegree_[static_cast<size_t>(i)] == 0) push(i);
  order_.clear();
  while (!ready_queued_.empty() || !ready_host_.empty()) {
    auto& h = !ready_queued_.empty() ? ready_queued_ : ready_host_;
    std::pop_heap(h.begin(), h.end(), later);
    const int32_t i = h.back();
    h.pop_back();
    order_.push_back(i);
    for (int32_t e = succ_begin_[static_cast<size_t>(i)]; e < succ_begin_[static_cast<size_t>(i) + 1]; ++e)
      if (--indegree_[static_cast<size_t>(succ_[static_cast<size_t>(e)])] == 0) push(succ_[static_cast<size_t>(e)]);
  }

  bool changed = false;
  for (int32_t i = 0; i < n && !changed; ++i) changed = order_[static_cast<size_t>(i)] != i;
  if (!changed) return false;
  nodes_tmp_.clear();
  device_tmp_.clear();
  for (const int32_t i : order_) {
    nodes_tmp_.push_back(nodes[static_cast<size_t>(i)]);
    device_tmp_.push_back(device[static_cast<size_t>(i)]);
  }
  nodes.swap(nodes_tmp_);
  device.swap(device_tmp_);
  return true;
}

}  // namespace sy::graph
