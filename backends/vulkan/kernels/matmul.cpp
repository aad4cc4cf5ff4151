// The matmul group: get_rows, matmul and matmul_id for every weight type the CPU backend
// computes (shaders/matmul.comp, get_rows.comp, dequant.glsl, qdot.glsl). Activations and
// outputs are f32. Like the CPU, matmul first converts the activations to the weight
// type's dot type (q8_0 for the 32-element quants and the grouped integers I4_G*/I8_G*,
// q8_K for the K-quants and IQ4_XS, bf16 for BF16; a prep shader, act_quant.comp, into the
// node's scratch) and dots the same integers, so Vulkan and the CPU differ only in the
// order of their float sums. F32, F16 and the FP8 block types meet f32 activations.
//
// matmul and matmul_id have an integer dot product def first (quantized weights, asked only
// where the device has VK_KHR_shader_integer_dot_product and no
// SWITCHYARD_VULKAN_PATH=portable): the same integer sums from packed 4 x 8-bit dots, so
// the same outputs. matmul then has a subgroup def (subgroup arithmetic) and the portable
// def. Only one-column matmuls (decode) reduce a whole workgroup per output and gain from
// subgroups: the integer dot def reduces them with subgroupAdd too where it can (c1_dot_sg);
// multi-column launches and matmul_id reduce eight threads per output in shared memory on
// every path.
#include <algorithm>
#include <cctype>
#include <cstdint>

#include "kernel.hpp"

namespace sy::vulkan {
namespace {

/// How matmul's activations are converted for a weight type (shaders/act_layout.glsl).
enum class Act { none, q8_0, q8_k, bf16 };

/// The shader variants of one weight type (names in shaders/matmul.list).
struct TypeShaders {
  StorageType type;
  Act act;
  std::string_view get_rows, c1, c1_sg, c8, id;
  std::string_view c1_dot = {}, c1_dot_sg = {}, c8_dot = {}, id_dot = {};  ///< empty: no integer dot variants
};

#define SY_MM_TYPE(T, a, n) \
  TypeShaders { StorageType::T, Act::a, "get_rows_" n, "matmul_" n "_c1", "matmul_" n "_c1_sg", "matmul_" n "_c8", "matmul_id_" n }
// The quantized types, whose activations are q8 levels.
#define SY_MM_QTYPE(T, a, n)                                                                                          \
  TypeShaders {                                                                                                        \
    StorageType::T, Act::a, "get_rows_" n, "matmul_" n "_c1", "matmul_" n "_c1_sg", "matmul_" n "_c8", "matmul_id_" n, \
        "matmul_" n "_c1_dot", "matmul_" n "_c1_dot_sg", "matmul_" n "_c8_dot", "matmul_id_" n "_dot"                  \
  }
constexpr TypeShaders kTypes[] = {
    SY_MM_TYPE(F32, none, "f32"),     SY_MM_TYPE(F16, none, "f16"),     SY_MM_TYPE(BF16, bf16, "bf16"),
    SY_MM_QTYPE(Q4_0, q8_0, "q4_0"),  SY_MM_QTYPE(Q4_1, q8_0, "q4_1"),  SY_MM_QTYPE(Q5_0, q8_0, "q5_0"),
    SY_MM_QTYPE(Q5_1, q8_0, "q5_1"),  SY_MM_QTYPE(Q8_0, q8_0, "q8_0"),  SY_MM_QTYPE(IQ4_NL, q8_0, "iq4_nl"),
    SY_MM_QTYPE(Q2_K, q8_k, "q2_k"),  SY_MM_QTYPE(Q3_K, q8_k, "q3_k"),  SY_MM_QTYPE(Q4_K, q8_k, "q4_k"),
    SY_MM_QTYPE(Q5_K, q8_k, "q5_k"),  SY_MM_QTYPE(Q6_K, q8_k, "q6_k"),  SY_MM_QTYPE(IQ4_XS, q8_k, "iq4_xs"),
    // Switchyard's own types (AWQ, GPTQ and FP8 checkpoints repacked at load): the grouped
    // integers meet q8_0 activations as on the CPU; FP8 blocks the f32 activations (dot_fp8).
    SY_MM_QTYPE(I4_G32, q8_0, "i4_g32"), SY_MM_QTYPE(I4_G64, q8_0, "i4_g64"), SY_MM_QTYPE(I4_G128, q8_0, "i4_g128"),
    SY_MM_QTYPE(I8_G32, q8_0, "i8_g32"), SY_MM_QTYPE(I8_G64, q8_0, "i8_g64"), SY_MM_QTYPE(I8_G128, q8_0, "i8_g128"),
    SY_MM_TYPE(FP8_E4M3_B128, none, "fp8_e4m3_b128"), SY_MM_TYPE(FP8_E5M2_B128, none, "fp8_e5m2_b128"),
};
#undef SY_MM_TYPE
#undef SY_MM_QTYPE

const TypeShaders* shaders_for(StorageType t) {
  for (const auto& s : kTypes)
    if (s.type == t) return &s;
  return nullptr;
}

// The shaders read weights in 16-bit pieces (f32 in 32-bit ones) and activations, outputs
// and ids as 32-bit values, so every address they form must be that aligned.
int64_t weight_align(StorageType t) { return t == StorageType::F32 ? 4 : 2; }

bool aligned(const GraphTensor& t, int64_t a) {
  for (int d = 0; d < 4; ++d)
    if (t.ne[d] > 1 && t.nb[d] % a != 0) return false;
  return t.buffer == nullptr || t.offset % static_cast<size_t>(a) == 0;
}

/// A weight (or table) the shaders decode: a known type, whole blocks per row, elements of
/// a plain type packed within the row, strides that fit the record.
bool weight_ok(const GraphTensor& w) {
  if (!shaders_for(w.type) || w.ne[0] <= 0) return false;
  const auto& info = storage_type_info(w.type);
  if (w.ne[0] % info.block_size != 0) return false;
  if (info.block_size == 1 && w.ne[0] > 1 && w.nb[0] != info.block_bytes) return false;
  return strides_fit(w) && aligned(w, weight_align(w.type));
}

/// An f32 (or i32) tensor the shaders index element by element: 4-byte elements in a row.
bool plain_ok(const GraphTensor& t, StorageType type) {
  return t.type == type && (t.ne[0] == 1 || t.nb[0] == 4) && strides_fit(t) && aligned(t, 4);
}

bool extents_fit(const GraphTensor& t) {
  return t.elements() > 0 && t.elements() <= INT32_MAX;
}

/// Rows fold over groups.x and groups.z (65535 is the least limit Vulkan guarantees per dimension).
constexpr uint32_t kMaxGroups = 65535;
void fold_rows(Launch& l, int64_t rows) {
  l.groups[0] = static_cast<uint32_t>(std::min<int64_t>(rows, kMaxGroups));
  l.groups[2] = static_cast<uint32_t>((rows + kMaxGroups - 1) / kMaxGroups);
}
uint32_t capped(int64_t n) { return static_cast<uint32_t>(std::clamp<int64_t>(n, 1, kMaxGroups)); }

bool fast(const Features& f) { return f.subgroup_arithmetic && !f.portable_only; }
bool int_dot(const Features& f, StorageType w) {
  const auto* s = shaders_for(w);
  return f.integer_dot_product && !f.portable_only && s && !s->c1_dot.empty();
}

/// Rows longer than this are refused, so every per-column size the shaders form in 32 bits
/// (act_col_bytes: at most 4k) fits.
constexpr int64_t kMaxK = int64_t{1} << 28;

/// Adds the prep stage converting `cols` activation columns of k elements for weight type
/// w (act_quant.comp: one invocation per block, per element for bf16; 64 a workgroup).
void add_prep(Launch& l, StorageType w, int64_t k, int64_t cols) {
  const Act act = shaders_for(w)->act;
  if (act == Act::none) return;
  const int64_t item = act == Act::q8_0 ? 32 : act == Act::q8_k ? 256 : 1;
  const int64_t col_bytes = act == Act::q8_0 ? k + k / 8 : act == Act::q8_k ? k + k / 64 : 4 * k;
  l.prep_shader = act == Act::q8_0 ? "act_q8_0" : act == Act::q8_k ? "act_q8_k" : "act_bf16";
  l.scratch_bytes = static_cast<uint64_t>(col_bytes * cols);
  const int64_t groups = (cols * (k / item) + 63) / 64;
  l.prep_groups[0] = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroups));
  l.prep_groups[1] = static_cast<uint32_t>((groups + kMaxGroups - 1) / kMaxGroups);
  l.prep_groups[2] = 1;
}

// matmul: W [k, rows], X f32 [k, m...], dst f32 [rows, m...].
Support matmul_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.src[0] < 0 || n.src[1] < 0) return Support::no;
  const auto &w = src_of(n, t, 0), &x = src_of(n, t, 1), &y = dst_of(n, t);
  if (!weight_ok(w) || w.ne[2] != 1 || w.ne[3] != 1 || w.ne[0] > kMaxK) return Support::no;
  if (!plain_ok(x, StorageType::F32) || !plain_ok(y, StorageType::F32)) return Support::no;
  if (!extents_fit(w) || !extents_fit(x) || !extents_fit(y)) return Support::no;
  if (x.ne[0] != w.ne[0] || y.ne[0] != w.ne[1]) return Support::no;
  for (int d = 1; d < 4; ++d)
    if (y.ne[d] != x.ne[d]) return Support::no;
  return Support::yes;
}
Support matmul_supports_sg(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  return fast(f) ? matmul_supports(n, t, f) : Support::no;
}

Support matmul_supports_dot(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  if (n.src[0] < 0 || !int_dot(f, src_of(n, t, 0).type)) return Support::no;
  return matmul_supports(n, t, f);
}

Launch matmul_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  const auto& w = src_of(n, t, 0);
  const auto* s = shaders_for(w.type);
  const int64_t m = src_of(n, t, 1).rows();
  Launch l;
  if (int_dot(f, w.type)) l.shader = m > 1 ? s->c8_dot : fast(f) ? s->c1_dot_sg : s->c1_dot;
  else l.shader = m > 1 ? s->c8 : fast(f) ? s->c1_sg : s->c1;
  fold_rows(l, w.ne[1]);
  l.groups[1] = capped(m > 1 ? (m + 7) / 8 : 1);  // eight columns a workgroup; more loop in the shader
  add_prep(l, w.type, w.ne[0], m);
  return l;
}

// matmul_id: W [k, rows, experts], X f32 [k, 1 or used, tokens], ids i32 [used, tokens],
// dst f32 [rows, used, tokens].
Support matmul_id_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.src[0] < 0 || n.src[1] < 0 || n.src[2] < 0) return Support::no;
  const auto &w = src_of(n, t, 0), &x = src_of(n, t, 1), &ids = src_of(n, t, 2), &y = dst_of(n, t);
  if (!weight_ok(w) || w.ne[3] != 1 || w.ne[0] > kMaxK) return Support::no;
  if (!plain_ok(x, StorageType::F32) || !plain_ok(y, StorageType::F32) || !plain_ok(ids, StorageType::I32))
    return Support::no;
  if (!extents_fit(w) || !extents_fit(x) || !extents_fit(y) || !extents_fit(ids)) return Support::no;
  const int64_t used = ids.ne[0], tokens = ids.ne[1];
  if (ids.ne[2] != 1 || ids.ne[3] != 1) return Support::no;
  if (x.ne[0] != w.ne[0] || (x.ne[1] != 1 && x.ne[1] != used) || x.ne[2] != tokens || x.ne[3] != 1) return Support::no;
  if (y.ne[0] != w.ne[1] || y.ne[1] != used || y.ne[2] != tokens || y.ne[3] != 1) return Support::no;
  return Support::yes;
}
Support matmul_id_supports_dot(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  if (n.src[0] < 0 || !int_dot(f, src_of(n, t, 0).type)) return Support::no;
  return matmul_id_supports(n, t, f);
}
Launch matmul_id_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  const auto& w = src_of(n, t, 0);
  Launch l;
  l.shader = int_dot(f, w.type) ? shaders_for(w.type)->id_dot : shaders_for(w.type)->id;
  fold_rows(l, w.ne[1]);
  l.groups[1] = capped((src_of(n, t, 2).elements() + 7) / 8);  // eight (slot, token) pairs a workgroup
  const auto& x = src_of(n, t, 1);
  add_prep(l, w.type, w.ne[0], x.ne[1] * x.ne[2]);
  return l;
}

// get_rows: table [k, n], ids i32 [m], dst f32 [k, m].
Support get_rows_supports(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.src[0] < 0 || n.src[1] < 0) return Support::no;
  const auto &table = src_of(n, t, 0), &ids = src_of(n, t, 1), &y = dst_of(n, t);
  if (!weight_ok(table) || table.ne[2] != 1 || table.ne[3] != 1) return Support::no;
  if (!plain_ok(ids, StorageType::I32) || !plain_ok(y, StorageType::F32)) return Support::no;
  if (!extents_fit(table) || !extents_fit(ids) || !extents_fit(y)) return Support::no;
  if (y.ne[0] != table.ne[0] || y.rows() != ids.elements()) return Support::no;
  return Support::yes;
}

Launch get_rows_plan(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  Launch l;
  l.shader = shaders_for(src_of(n, t, 0).type)->get_rows;
  fold_rows(l, dst_of(n, t).rows());
  return l;
}

constexpr KernelDef kDefs[] = {
    {OpKind::matmul, matmul_supports_dot, matmul_plan, "matmul: integer dot product"},
    {OpKind::matmul, matmul_supports_sg, matmul_plan, "matmul: subgroup"},
    {OpKind::matmul, matmul_supports, matmul_plan},
    {OpKind::matmul_id, matmul_id_supports_dot, matmul_id_plan, "matmul_id: integer dot product"},
    {OpKind::matmul_id, matmul_id_supports, matmul_id_plan},
    {OpKind::get_rows, get_rows_supports, get_rows_plan},
};

}  // namespace

std::span<const KernelDef> matmul_kernels() { return kDefs; }

std::vector<std::string> matmul_weight_types() {
  std::vector<std::string> out;
  for (const auto& s : kTypes) {
    std::string name(s.get_rows.substr(std::string_view("get_rows_").size()));  // "get_rows_q4_k" -> "q4_k"
    for (auto& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out.push_back(std::move(name));
  }
  return out;
}

}  // namespace sy::vulkan
