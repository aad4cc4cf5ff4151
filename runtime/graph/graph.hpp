// Building one step's compute graph: architectures call these methods to declare tensors
// and ops; the scheduler then places, allocates and runs it. Clearing keeps every vector's
// capacity, so rebuilding the same graph each decode step does not touch the heap.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "switchyard/graph.hpp"

namespace sy::graph {

using TensorId = int32_t;

/// Where a tensor's memory comes from.
enum class Origin : uint8_t {
  persistent,    ///< weights, KV cache, recurrent state: resolved before the graph is built
  input,         ///< host memory the engine fills (token ids, positions, block tables)
  intermediate,  ///< placed in the step's arena by the scheduler
  view,          ///< a window onto another tensor
};

struct TensorInfo {
  Origin origin = Origin::intermediate;
  int device = -1;          ///< persistent: index of the device holding it; input: -1 (host)
  TensorId view_of = -1;    ///< view: the tensor it looks into
  size_t view_offset = 0;   ///< view: byte offset into it
  bool output = false;      ///< read by the engine after the run: never reused
};

class Graph {
 public:
  /// Forgets every tensor and node, keeping capacity.
  void clear();

  /// A persistent tensor on device `device` (already holding its data address).
  TensorId persistent(const GraphTensor& t, int device);
  /// Host memory owned by the caller, valid until the graph has run.
  TensorId input(StorageType type, const void* data, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1);
  /// A new contiguous intermediate.
  TensorId tensor(StorageType type, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1);
  /// A view of `src` with its own shape and byte strides, `offset` bytes in.
  TensorId view(TensorId src, std::initializer_list<int64_t> ne, std::initializer_list<int64_t> nb, size_t offset);
  /// The same bytes with a new contiguous shape (src must be contiguous).
  TensorId reshape(TensorId src, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1);
  /// Marks a tensor the caller reads after the run. For a view, the tensor it looks into is
  /// kept too: the arena frees memory by base tensor.
  void mark_output(TensorId t) {
    info_[static_cast<size_t>(t)].output = true;
    info_[static_cast<size_t>(base(t))].output = true;
  }
  /// Keeps t for the engine to read after the run (routing statistics), in tap order.
  void tap(TensorId t) {
    mark_output(t);
    taps_.push_back(t);
  }
  [[nodiscard]] const std::vector<TensorId>& taps() const { return taps_; }

  /// Appends a node writing `dst`; returns dst.
  TensorId op(OpKind kind, TensorId dst, std::initializer_list<TensorId> src, std::initializer_list<int32_t> i = {},
              std::initializer_list<float> f = {});
  /// The same with a source count known only at run time (at most kMaxSources).
  TensorId op(OpKind kind, TensorId dst, std::span<const TensorId> src);

  // Shorthands that create the destination with the usual shape.
  TensorId unary(OpKind kind, TensorId x, std::initializer_list<float> f = {});
  TensorId binary(OpKind kind, TensorId a, TensorId b);
  TensorId matmul(TensorId w, TensorId x);
  TensorId matmul_id(TensorId w, TensorId x, TensorId ids);
  TensorId get_rows(TensorId table, TensorId ids);
  TensorId rms_norm(TensorId x, float eps) { return unary(OpKind::rms_norm, x, {eps}); }
  /// rms_norm(x) * w, the usual normalisation layer.
  TensorId norm(TensorId x, TensorId w, float eps) { return binary(OpKind::mul, rms_norm(x, eps), w); }
  TensorId copy(TensorId x, StorageType type = StorageType::F32);

  [[nodiscard]] const GraphTensor& tensor_at(TensorId t) const { return tensors_[static_cast<size_t>(t)]; }
  [[nodiscard]] GraphTensor& tensor_at(TensorId t) { return tensors_[static_cast<size_t>(t)]; }
  [[nodiscard]] const TensorInfo& info(TensorId t) const { return info_[static_cast<size_t>(t)]; }
  [[nodiscard]] std::vector<GraphTensor>& tensors() { return tensors_; }
  [[nodiscard]] const std::vector<GraphTensor>& tensors() const { return tensors_; }
  [[nodiscard]] const std::vector<GraphNode>& nodes() const { return nodes_; }
  [[nodiscard]] const std::vector<TensorInfo>& infos() const { return info_; }
  /// The tensor a view finally looks into (itself when it is not a view).
  [[nodiscard]] TensorId base(TensorId t) const;

 private:
  TensorId add(const GraphTensor& t, const TensorInfo& i);

  std::vector<GraphTensor> tensors_;
  std::vector<TensorInfo> info_;
  std::vector<GraphNode> nodes_;
  std::vector<TensorId> taps_;
};

/// Contiguous byte strides for a shape of `type`.
void set_contiguous_strides(GraphTensor& t);

}  // namespace sy::graph
