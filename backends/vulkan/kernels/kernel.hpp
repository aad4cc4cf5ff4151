// How a Vulkan kernel joins the backend: a KernelDef per op (or per op family) says which
// nodes it runs — the whole node, every source's type, shape and strides — and how to
// launch it. Each kernel group (kernels/<group>.cpp) returns its defs; kernels/registry.cpp
// lists the groups. The executor asks each def of the node's op in order and uses the
// first that answers yes (or prefer_not).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <string_view>

#include "switchyard/backend.hpp"
#include "switchyard/graph.hpp"

namespace sy::vulkan {

/// What the device offers that kernels may choose paths by.
struct Features {
  uint32_t subgroup_size = 0;        ///< 0: unknown
  bool subgroup_arithmetic = false;  ///< subgroupAdd/Max in compute shaders
  bool integer_dot_product = false;  ///< VK_KHR_shader_integer_dot_product
  bool cooperative_matrix = false;   ///< VK_KHR_cooperative_matrix
  bool portable_only = false;        ///< SWITCHYARD_VULKAN_PATH=portable: use no fast path
};

/// The per-node record shaders read (shaders/common.glsl's NodeRecord; same layout).
/// Tensor slot 0 is the destination, 1 + s is source s.
struct alignas(16) NodeRecord {
  uint64_t addr[9];
  uint32_t type[9];
  uint32_t n_src;
  int32_t ne[36];
  int32_t nb[36];
  int32_t ip[8];
  float fp[4];
  uint32_t up[4];
  uint64_t scratch;   ///< device address of the executor's scratch (Launch::scratch_bytes), else 0
  uint64_t reserved;  ///< pads the record to a multiple of 16 bytes
};
static_assert(sizeof(NodeRecord) == 480, "NodeRecord must match shaders/common.glsl");

/// Which compiled shader runs a node, over how many workgroups, with which extra values.
/// A kernel that needs its inputs converted first (matmul's activations into the weight
/// type's dot type) names a prep shader: the executor runs it over prep_groups with the
/// same record, then a barrier, then the main shader; both see `scratch_bytes` of device
/// memory at NodeRecord::scratch, private to the node until its main shader finished.
struct Launch {
  std::string_view shader;       ///< SPIR-V name (a variant listed in shaders/*.list)
  uint32_t groups[3] = {1, 1, 1};
  uint32_t u[4] = {0, 0, 0, 0};  ///< copied into NodeRecord::up
  std::string_view prep_shader = {};  ///< empty: none
  uint32_t prep_groups[3] = {1, 1, 1};
  uint64_t scratch_bytes = 0;
};

struct KernelDef {
  OpKind op;
  /// Whether this kernel runs `node` (its tensors index `tensors`; memory may be unassigned).
  Support (*supports)(const GraphNode& node, std::span<const GraphTensor> tensors, const Features& f);
  /// The launch for a node supports() accepted.
  Launch (*plan)(const GraphNode& node, std::span<const GraphTensor> tensors, const Features& f);
  /// Fast path this def implements, for `plugins --devices` ("matmul: subgroup"); empty for portable.
  std::string_view path = {};
};

// One function per kernel group (kernels/<group>.cpp).
std::span<const KernelDef> elementwise_kernels();  // add mul scale silu gelu sigmoid softplus swiglu copy
                                                   // gather_cols fp8_qdq
std::span<const KernelDef> norm_kernels();         // rms_norm l2_norm softmax
std::span<const KernelDef> rope_kernels();         // rope
std::span<const KernelDef> matmul_kernels();       // matmul matmul_id get_rows
/// The names of the weight types matmul, matmul_id and get_rows have shaders for ("Q4_K"):
/// the backend's native types, as its manifest states them. Names, not ids: the manifest is
/// written from the descriptor before any type registry is attached.
std::vector<std::string> matmul_weight_types();
std::span<const KernelDef> routing_kernels();      // top_k argsort expert_weights moe_combine concat
std::span<const KernelDef> cache_kernels();        // set_rows attention
std::span<const KernelDef> recurrent_kernels();    // conv1d delta_net

/// Every group's defs, in the order the executor asks them.
std::span<const KernelDef* const> all_kernels();

/// Helpers for supports(): tensor of slot (0 = dst, 1 + s = src s) and contiguity.
inline const GraphTensor& dst_of(const GraphNode& n, std::span<const GraphTensor> t) { return t[static_cast<size_t>(n.dst)]; }
inline const GraphTensor& src_of(const GraphNode& n, std::span<const GraphTensor> t, int s) {
  return t[static_cast<size_t>(n.src[s])];
}
/// Rows are whole and densely packed (any type), i.e. nb[0] is the element size for plain
/// types and each higher stride is the product of the lower ones.
bool is_contiguous(const GraphTensor& t);
/// Every size, and every stride of a dimension larger than 1, fits 31 bits (the record
/// stores them as int32; a size-1 dimension's stride is recorded as 0).
bool strides_fit(const GraphTensor& t);
/// A launch of `groups` workgroups folded over x and y, so neither exceeds 65535 (Vulkan's
/// guaranteed minimum per dimension); shaders rebuild the index from gl_WorkGroupID.xy.
Launch spread_groups(std::string_view shader, int64_t groups);

}  // namespace sy::vulkan
