// Elementwise group: add, mul, scale, silu, gelu, sigmoid, softplus, swiglu, copy
// (f32 -> f32 of any layout; f32 to and from f16, bf16, Q8_0 and Q4_0), and the two ops on
// the inputs of quantized checkpoints' linears: gather_cols (act-order GPTQ) and fp8_qdq
// (static FP8 activation scales), both exact. Every f32 tensor may have any strides (whole
// elements, 31-bit); shaders/elementwise.glsl walks the elements. The other side of a
// converting copy must be dense: the CPU reads and writes it as packed rows whatever its
// strides say.
#include <algorithm>

#include "kernel.hpp"

namespace sy::vulkan {
namespace {

// 256 threads per workgroup (elementwise.glsl); beyond this many workgroups the threads
// loop, which keeps lavapipe's dispatches cheap and stays far under any device's limit.
constexpr uint64_t kThreads = 256;
constexpr uint64_t kMaxGroups = 4096;

bool same_shape(const GraphTensor& a, const GraphTensor& b) {
  return a.ne[0] == b.ne[0] && a.ne[1] == b.ne[1] && a.ne[2] == b.ne[2] && a.ne[3] == b.ne[3];
}

// Usable by the shaders: a type of `type`, strides in whole, aligned elements, 31-bit sizes,
// fewer than 2^31 elements (the loop index is 32-bit).
bool usable(const GraphTensor& t, StorageType type) {
  const int64_t es = type == StorageType::F16 ? 2 : 4;
  if (t.type != type || !strides_fit(t) || t.elements() <= 0 || t.elements() > INT32_MAX) return false;
  if (t.offset % static_cast<size_t>(es) != 0) return false;
  for (int d = 0; d < 4; ++d)
    if (t.nb[d] % es != 0) return false;
  return true;
}

bool has_sources(const GraphNode& n, int count) {
  for (int s = 0; s < kMaxSources; ++s)
    if ((n.src[s] >= 0) != (s < count)) return false;
  return true;
}

Launch over_elements(std::string_view shader, const GraphTensor& dst) {
  Launch l;
  l.shader = shader;
  const auto n = static_cast<uint64_t>(dst.elements());
  l.groups[0] = static_cast<uint32_t>(std::clamp<uint64_t>((n + kThreads - 1) / kThreads, 1, kMaxGroups));
  return l;
}

Support unary_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!has_sources(n, 1)) return Support::no;
  const auto& x = src_of(n, t, 0);
  const auto& y = dst_of(n, t);
  return usable(x, StorageType::F32) && usable(y, StorageType::F32) && same_shape(x, y) ? Support::yes : Support::no;
}

template <OpKind op>
Launch unary_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  std::string_view shader;
  switch (op) {
    case OpKind::silu: shader = "ew_silu"; break;
    case OpKind::gelu: shader = "ew_gelu"; break;
    case OpKind::sigmoid: shader = "ew_sigmoid"; break;
    case OpKind::softplus: shader = "ew_softplus"; break;
    default: shader = "ew_scale"; break;
  }
  return over_elements(shader, dst_of(n, t));
}

Support binary_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!has_sources(n, 2)) return Support::no;
  const auto& a = src_of(n, t, 0);
  const auto& b = src_of(n, t, 1);
  const auto& y = dst_of(n, t);
  if (!usable(a, StorageType::F32) || !usable(b, StorageType::F32) || !usable(y, StorageType::F32)) return Support::no;
  if (!same_shape(a, y)) return Support::no;
  for (int d = 0; d < 4; ++d)
    if (b.ne[d] != a.ne[d] && b.ne[d] != 1) return Support::no;
  return Support::yes;
}

template <OpKind op>
Launch binary_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return over_elements(op == OpKind::add ? "ew_add" : "ew_mul", dst_of(n, t));
}

Support swiglu_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!has_sources(n, 2)) return Support::no;
  const auto& g = src_of(n, t, 0);
  const auto& u = src_of(n, t, 1);
  const auto& y = dst_of(n, t);
  return usable(g, StorageType::F32) && usable(u, StorageType::F32) && usable(y, StorageType::F32) &&
                 same_shape(g, u) && same_shape(g, y)
             ? Support::yes
             : Support::no;
}

Launch swiglu_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return over_elements("ew_swiglu", dst_of(n, t));
}

std::string_view copy_shader(StorageType from, StorageType to) {
  using enum StorageType;
  if (from == F32) switch (to) {
      case F32: return "copy_f32_f32";
      case F16: return "copy_f32_f16";
      case BF16: return "copy_f32_bf16";
      case Q8_0: return "copy_f32_q8_0";
      case Q4_0: return "copy_f32_q4_0";
      default: return {};
    }
  if (to == F32) switch (from) {
      case F16: return "copy_f16_f32";
      case BF16: return "copy_bf16_f32";
      case Q8_0: return "copy_q8_0_f32";
      case Q4_0: return "copy_q4_0_f32";
      default: return {};
    }
  return {};
}

bool block_type(StorageType t) { return t == StorageType::Q8_0 || t == StorageType::Q4_0; }

// The converted (non-f32) side of a copy: dense, as the CPU packs it, at an address its
// shaders can read in 16-bit pieces (or as whole elements).
bool usable_packed(const GraphTensor& t) {
  if (!is_contiguous(t) || !strides_fit(t) || t.elements() <= 0 || t.elements() > INT32_MAX) return false;
  return t.offset % (t.type == StorageType::F32 ? 4 : 2) == 0;
}

Support copy_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!has_sources(n, 1)) return Support::no;
  const auto& x = src_of(n, t, 0);
  const auto& y = dst_of(n, t);
  if (copy_shader(x.type, y.type).empty() || x.elements() != y.elements()) return Support::no;
  if (x.type == StorageType::F32 && y.type == StorageType::F32)
    return usable(x, x.type) && usable(y, y.type) ? Support::yes : Support::no;
  const auto& f = x.type == StorageType::F32 ? x : y;  // the side of any layout
  const auto& p = x.type == StorageType::F32 ? y : x;  // the packed side
  if (!usable(f, StorageType::F32) || !usable_packed(p)) return Support::no;
  // Blocks run along the f32 side's rows (the CPU converts row by row).
  if (block_type(p.type) && f.ne[0] % 32 != 0) return Support::no;
  return Support::yes;
}

Launch copy_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  const auto& x = src_of(n, t, 0);
  const auto& y = dst_of(n, t);
  const auto shader = copy_shader(x.type, y.type);
  if (block_type(y.type)) {
    // quantize_block: one 64-thread workgroup per block, looping beyond kMaxGroups.
    Launch l;
    l.shader = shader;
    l.groups[0] = static_cast<uint32_t>(std::clamp<uint64_t>(static_cast<uint64_t>(x.elements()) / 32, 1, kMaxGroups));
    return l;
  }
  if (block_type(x.type)) {
    // One invocation per 32-element block.
    GraphTensor units = y;
    units.ne[0] = y.elements() / 32;
    units.ne[1] = units.ne[2] = units.ne[3] = 1;
    return over_elements(shader, units);
  }
  return over_elements(shader, y);
}

// gather_cols: x F32 [k, rows...], ids I32 [m] (dense, as the CPU reads them), dst F32
// [m, rows...]; any strides on x and dst.
Support gather_cols_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!has_sources(n, 2)) return Support::no;
  const auto &x = src_of(n, t, 0), &ids = src_of(n, t, 1), &y = dst_of(n, t);
  if (!usable(x, StorageType::F32) || !usable(y, StorageType::F32) || !usable(ids, StorageType::I32)) return Support::no;
  if (!is_contiguous(ids) || ids.elements() != y.ne[0]) return Support::no;
  for (int d = 1; d < 4; ++d)
    if (x.ne[d] != y.ne[d]) return Support::no;
  return Support::yes;
}

Launch gather_cols_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return over_elements("gather_cols", dst_of(n, t));
}

// fp8_qdq: x F32, then 1 to 7 scale tensors F32 (any shape), dst shaped as x; any strides.
Support fp8_qdq_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.src[0] < 0 || n.src[1] < 0) return Support::no;
  int count = 0;
  while (count < kMaxSources && n.src[count] >= 0) ++count;
  if (!has_sources(n, count)) return Support::no;
  for (int s = 0; s < count; ++s)
    if (!usable(src_of(n, t, s), StorageType::F32)) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  return usable(y, StorageType::F32) && same_shape(x, y) ? Support::yes : Support::no;
}

Launch fp8_qdq_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return over_elements("fp8_qdq", dst_of(n, t));
}

constexpr KernelDef kDefs[] = {
    {OpKind::add, binary_supports, binary_plan<OpKind::add>},
    {OpKind::mul, binary_supports, binary_plan<OpKind::mul>},
    {OpKind::scale, unary_supports, unary_plan<OpKind::scale>},
    {OpKind::silu, unary_supports, unary_plan<OpKind::silu>},
    {OpKind::gelu, unary_supports, unary_plan<OpKind::gelu>},
    {OpKind::sigmoid, unary_supports, unary_plan<OpKind::sigmoid>},
    {OpKind::softplus, unary_supports, unary_plan<OpKind::softplus>},
    {OpKind::swiglu, swiglu_supports, swiglu_plan},
    {OpKind::copy, copy_supports, copy_plan},
    {OpKind::gather_cols, gather_cols_supports, gather_cols_plan},
    {OpKind::fp8_qdq, fp8_qdq_supports, fp8_qdq_plan},
};

}  // namespace

std::span<const KernelDef> elementwise_kernels() { return kDefs; }

}  // namespace sy::vulkan
