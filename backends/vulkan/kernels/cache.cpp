// The KV cache: set_rows writes rows into a cache (F32, F16, BF16, or Q8_0/Q4_0 with the
// SDK's quantizer bit for bit: shaders/set_rows*.comp), and attention reads it through
// the block tables (shaders/attention.comp). Both index tensors through their strides, so
// a V cache that is a view of the K cache (same cells, fewer dimensions) works as is.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernel.hpp"

namespace sy::vulkan {
namespace {

constexpr int64_t kMaxGroups = 65535;  // Vulkan's guaranteed minimum per dimension
constexpr int64_t kMaxHeadK = 1024;    // attention.comp's MAX_DK
constexpr int64_t kMaxHeadV = 512;     // attention.comp's WG * ACC

bool cache_type(StorageType t) {
  return t == StorageType::F32 || t == StorageType::F16 || t == StorageType::BF16 || t == StorageType::Q8_0 ||
         t == StorageType::Q4_0;
}

bool quantized(StorageType t) { return t == StorageType::Q8_0 || t == StorageType::Q4_0; }

bool fits_int32(int64_t v) { return v >= 0 && v <= std::numeric_limits<int32_t>::max(); }

// Every stride of t (over dimensions that are stepped) and its offset are multiples of a.
bool aligned(const GraphTensor& t, int64_t a) {
  for (int d = 0; d < 4; ++d)
    if (t.ne[d] > 1 && t.nb[d] % a != 0) return false;
  return t.buffer == nullptr || t.offset % static_cast<size_t>(a) == 0;
}

// Shaders read caches in 16-bit pieces (f32 in 32-bit ones), blocks of 34 and 18 bytes included.
int64_t cache_align(StorageType t) { return t == StorageType::F32 ? 4 : 2; }

// An f32 (or i32) tensor indexed element by element through its strides.
bool plain(const GraphTensor& t, StorageType type) {
  return t.type == type && strides_fit(t) && aligned(t, 4) && t.elements() > 0 && fits_int32(t.elements());
}

// A 1-D list of ids (slots, positions, sequence rows) of length n.
bool id_list(const GraphTensor& t, int64_t n) {
  return plain(t, StorageType::I32) && t.ne[0] == n && t.ne[1] == 1 && t.ne[2] == 1 && t.ne[3] == 1;
}

// A cache [dim, heads, cells] whose rows the shaders decode: a known type, whole blocks,
// elements of a plain type packed in the row, rows at any aligned stride.
bool cache_ok(const GraphTensor& c) {
  if (!cache_type(c.type) || c.ne[0] <= 0 || c.ne[1] <= 0 || c.ne[2] <= 0 || c.ne[3] != 1 || !strides_fit(c))
    return false;
  const auto& info = storage_type_info(c.type);
  if (c.ne[0] % info.block_size != 0) return false;
  if (info.block_size == 1 && c.ne[0] > 1 && c.nb[0] != info.block_bytes) return false;
  return aligned(c, cache_align(c.type));
}

// ---- set_rows ----

Support set_rows_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.src[0] < 0 || n.src[1] < 0 || n.src[2] >= 0) return Support::no;
  const auto &x = src_of(n, t, 0), &slots = src_of(n, t, 1), &d = dst_of(n, t);
  if (!plain(x, StorageType::F32) || !id_list(slots, x.rows())) return Support::no;
  if (!cache_ok(d) || d.ne[0] * d.ne[1] != x.ne[0]) return Support::no;
  // The k elements of a cell's row are written as one packed row, as the CPU does.
  GraphTensor cell = d;
  cell.ne[2] = 1;
  if (!is_contiguous(cell)) return Support::no;
  if (quantized(d.type) && x.ne[0] / 32 > kMaxGroups) return Support::no;
  return Support::yes;
}

Launch set_rows_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  const auto &x = src_of(n, t, 0), &d = dst_of(n, t);
  Launch l;
  const int64_t k = x.ne[0];
  if (d.type == StorageType::Q8_0 || d.type == StorageType::Q4_0) {
    l.shader = d.type == StorageType::Q8_0 ? "set_rows_q8_0" : "set_rows_q4_0";
    l.groups[0] = static_cast<uint32_t>(k / 32);
  } else {
    l.shader = "set_rows";
    l.groups[0] = static_cast<uint32_t>((k + 255) / 256);
  }
  l.groups[1] = static_cast<uint32_t>(std::min(x.rows(), kMaxGroups));  // the shader loops over the rest
  return l;
}

// ---- attention ----

Support attention_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  for (int s = 0; s < 6; ++s)
    if (n.src[s] < 0) return Support::no;
  if (n.src[6] >= 0 || n.i[0] < 1) return Support::no;
  const auto &q = src_of(n, t, 0), &k = src_of(n, t, 1), &v = src_of(n, t, 2);
  const auto &pos = src_of(n, t, 3), &seq = src_of(n, t, 4), &tables = src_of(n, t, 5), &o = dst_of(n, t);
  const int64_t dk = q.ne[0], heads = q.ne[1], tokens = q.ne[2];
  if (!plain(q, StorageType::F32) || q.ne[3] != 1 || dk > kMaxHeadK) return Support::no;
  if (heads > kMaxGroups || tokens > kMaxGroups) return Support::no;
  if (!cache_ok(k) || !cache_ok(v) || k.ne[0] != dk || heads % k.ne[1] != 0) return Support::no;
  if (v.ne[1] != k.ne[1] || v.ne[2] != k.ne[2] || v.ne[0] > kMaxHeadV) return Support::no;
  if (!id_list(pos, tokens) || !id_list(seq, tokens)) return Support::no;
  if (!plain(tables, StorageType::I32) || tables.ne[2] != 1 || tables.ne[3] != 1) return Support::no;
  if (!plain(o, StorageType::F32) || o.ne[0] != v.ne[0] || o.ne[1] != heads || o.ne[2] != tokens || o.ne[3] != 1)
    return Support::no;
  return Support::yes;
}

bool integer_dot(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  return f.integer_dot_product && !f.portable_only && quantized(src_of(n, t, 1).type);
}

Support attention_idot_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  return integer_dot(n, t, f) ? attention_supports(n, t, f) : Support::no;
}

Launch attention_launch(std::string_view shader, const GraphNode& n, std::span<const GraphTensor> t) {
  const auto& q = src_of(n, t, 0);
  Launch l;
  l.shader = shader;
  l.groups[0] = static_cast<uint32_t>(q.ne[1]);
  l.groups[1] = static_cast<uint32_t>(q.ne[2]);
  return l;
}

Launch attention_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return attention_launch("attention", n, t);
}

Launch attention_idot_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  return attention_launch("attention_idot", n, t);
}

constexpr KernelDef kDefs[] = {
    {OpKind::set_rows, set_rows_supports, set_rows_plan, {}},
    {OpKind::attention, attention_idot_supports, attention_idot_plan, "attention: integer dot product (q8_0/q4_0 KV)"},
    {OpKind::attention, attention_supports, attention_plan, {}},
};

}  // namespace

std::span<const KernelDef> cache_kernels() { return kDefs; }

}  // namespace sy::vulkan
