// How a CUDA kernel joins the backend, as in the Vulkan backend: a KernelDef per op says which
// nodes it runs (every tensor's type, shape and strides; memory may be unassigned) and queues
// the launch. Each group (kernels/<group>.cpp, its device code in <group>.cu) returns its
// defs; kernels/registry.cpp lists the groups, and the executor takes the first def of the
// node's op that does not answer no.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "kernels/launch.hpp"
#include "switchyard/backend.hpp"
#include "switchyard/graph.hpp"

namespace sy::cuda {

/// What the device offers that kernels may choose paths by.
struct Features {
  int cc_major = 0, cc_minor = 0;  ///< compute capability
  bool portable_only = false;      ///< SWITCHYARD_CUDA_PATH=portable: use no fast path
};

struct KernelDef {
  OpKind op;
  Support (*supports)(const GraphNode& node, std::span<const GraphTensor> tensors, const Features& f);
  /// Queues the node's kernels; returns a cudaError_t value (0: queued).
  int (*launch)(const GraphNode& node, const NodeRecord* rec, const NodeRecord& host, Stream stream);
  std::string_view path = {};  ///< the fast path it implements, for `plugins --devices`; empty: portable
  /// Device scratch the launch needs (the record's `scratch`), from the node's record; null: none.
  size_t (*scratch)(const NodeRecord& host) = nullptr;
};

std::span<const KernelDef> elementwise_kernels();  // add mul scale silu gelu sigmoid softplus swiglu
std::span<const KernelDef> data_kernels();         // copy gather_cols fp8_qdq
std::span<const KernelDef> recurrent_kernels();    // conv1d delta_net
std::span<const KernelDef> norm_kernels();         // rms_norm l2_norm softmax
std::span<const KernelDef> rope_kernels();         // rope
std::span<const KernelDef> matmul_kernels();       // matmul matmul_id get_rows
std::span<const KernelDef> cache_kernels();        // set_rows attention
std::span<const KernelDef> routing_kernels();      // top_k argsort expert_weights moe_combine concat
/// Every group's defs, in the order the executor asks them.
std::span<const KernelDef* const> all_kernels();
/// The weight types matmul, matmul_id and get_rows run natively (manifest names, "Q4_K").
std::vector<std::string> native_weight_types();

inline const GraphTensor& dst_of(const GraphNode& n, std::span<const GraphTensor> t) { return t[static_cast<size_t>(n.dst)]; }
inline const GraphTensor& src_of(const GraphNode& n, std::span<const GraphTensor> t, int s) {
  return t[static_cast<size_t>(n.src[s])];
}
/// F32 elements at 4-byte-aligned strides, at least one element.
bool f32_layout(const GraphTensor& t);
bool same_shape(const GraphTensor& a, const GraphTensor& b);
/// Sources 0..count-1 are set and no later one is.
bool sources_are(const GraphNode& n, int count);

}  // namespace sy::cuda
