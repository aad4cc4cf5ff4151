// matmul, matmul_id and get_rows for every weight type dequant.cuh decodes: batches of 32+
// columns on the tensor cores (matmul_mma.cu: weights dequantized to f16), then the q8 path
// for the legacy 32-element types and the K-quants (matmul_q8.cu: activations quantized as the
// CPU does, integer dot products), then the portable path for every type (matmul.cu: one
// warp per output with f32 activations). The weight types listed here are the backend's
// native types, as its manifest states them.
#include <algorithm>
#include <string_view>

#include "kernels/kernel.hpp"
#include "kernels/types.hpp"

namespace sy::cuda {
namespace {

struct WeightType {
  StorageType type;
  uint32_t id;            ///< the constant matmul.cu switches on
  std::string_view name;  ///< the manifest's spelling: written before any type registry is attached
};
#define SY_CUDA_WEIGHT(T) {StorageType::T, ty::T, #T}
constexpr WeightType kTypes[] = {
    SY_CUDA_WEIGHT(F32),    SY_CUDA_WEIGHT(F16),    SY_CUDA_WEIGHT(BF16),   SY_CUDA_WEIGHT(Q4_0),
    SY_CUDA_WEIGHT(Q4_1),   SY_CUDA_WEIGHT(Q5_0),   SY_CUDA_WEIGHT(Q5_1),   SY_CUDA_WEIGHT(Q8_0),
    SY_CUDA_WEIGHT(IQ4_NL), SY_CUDA_WEIGHT(Q2_K),   SY_CUDA_WEIGHT(Q3_K),   SY_CUDA_WEIGHT(Q4_K),
    SY_CUDA_WEIGHT(Q5_K),   SY_CUDA_WEIGHT(Q6_K),   SY_CUDA_WEIGHT(IQ4_XS), SY_CUDA_WEIGHT(I4_G32),
    SY_CUDA_WEIGHT(I4_G64), SY_CUDA_WEIGHT(I4_G128), SY_CUDA_WEIGHT(I8_G32), SY_CUDA_WEIGHT(I8_G64),
    SY_CUDA_WEIGHT(I8_G128), SY_CUDA_WEIGHT(FP8_E4M3_B128), SY_CUDA_WEIGHT(FP8_E5M2_B128),
};
#undef SY_CUDA_WEIGHT
constexpr bool ids_agree() {
  for (const auto& t : kTypes)
    if (static_cast<uint32_t>(t.type) != t.id) return false;
  return true;
}
static_assert(ids_agree(), "kernels/types.hpp must match switchyard/storage.hpp");

bool known(StorageType t) {
  return std::any_of(std::begin(kTypes), std::end(kTypes), [t](const WeightType& w) { return w.type == t; });
}

// Whole blocks per row, plain elements packed within it, rows at 2-byte-aligned strides (the
// kernels read f16 scales byte by byte, so only f32 needs 4).
bool weight_ok(const GraphTensor& w) {
  if (!known(w.type) || w.ne[0] <= 0) return false;
  const auto& info = storage_type_info(w.type);
  if (w.ne[0] % info.block_size != 0) return false;
  if (info.block_size == 1 && w.ne[0] > 1 && w.nb[0] != info.block_bytes) return false;
  const int64_t align = w.type == StorageType::F32 ? 4 : w.type == StorageType::F16 || w.type == StorageType::BF16 ? 2 : 1;
  for (int d = 1; d < 4; ++d)
    if (w.ne[d] > 1 && w.nb[d] % align != 0) return false;
  return true;
}

// 4-byte elements packed in a row (activations, outputs, ids).
bool plain_ok(const GraphTensor& t, StorageType type) {
  if (t.type != type || t.elements() <= 0 || (t.ne[0] > 1 && t.nb[0] != 4)) return false;
  for (int64_t b : t.nb)
    if (b % 4 != 0) return false;
  return true;
}

Support matmul(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &w = src_of(n, t, 0), &x = src_of(n, t, 1), &y = dst_of(n, t);
  if (!weight_ok(w) || w.ne[2] != 1 || w.ne[3] != 1) return Support::no;
  if (!plain_ok(x, StorageType::F32) || !plain_ok(y, StorageType::F32)) return Support::no;
  if (x.ne[0] != w.ne[0] || y.ne[0] != w.ne[1]) return Support::no;
  for (int d = 1; d < 4; ++d)
    if (y.ne[d] != x.ne[d]) return Support::no;
  return Support::yes;
}

Support matmul_id(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 3)) return Support::no;
  const auto &w = src_of(n, t, 0), &x = src_of(n, t, 1), &ids = src_of(n, t, 2), &y = dst_of(n, t);
  if (!weight_ok(w) || w.ne[3] != 1) return Support::no;
  if (!plain_ok(x, StorageType::F32) || !plain_ok(y, StorageType::F32) || !plain_ok(ids, StorageType::I32))
    return Support::no;
  const int64_t used = ids.ne[0], tokens = ids.ne[1];
  if (ids.ne[2] != 1 || ids.ne[3] != 1) return Support::no;
  if (x.ne[0] != w.ne[0] || (x.ne[1] != 1 && x.ne[1] != used) || x.ne[2] != tokens || x.ne[3] != 1) return Support::no;
  if (y.ne[0] != w.ne[1] || y.ne[1] != used || y.ne[2] != tokens || y.ne[3] != 1) return Support::no;
  return Support::yes;
}

Support get_rows(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &table = src_of(n, t, 0), &ids = src_of(n, t, 1), &y = dst_of(n, t);
  if (!weight_ok(table) || table.ne[2] != 1 || table.ne[3] != 1) return Support::no;
  if (!plain_ok(ids, StorageType::I32) || !plain_ok(y, StorageType::F32) || ids.ne[3] != 1) return Support::no;
  return y.ne[0] == table.ne[0] && y.rows() == ids.elements() ? Support::yes : Support::no;
}

// Batches from this many activation columns (matmul) or tokens (matmul_id) take the tensor
// cores: below it a 64-column tile would be mostly padding, and the q8 path reads the weights
// once per column anyway (decode is bound by reading the weights).
constexpr int64_t kMmaMinColumns = 32;

// The grid's y dimension counts 64-column tiles: at most 65,535 of them.
constexpr int64_t kMaxTiles = 65535;

Support matmul_mma(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  if (n.src[0] < 0 || n.src[1] < 0 || !mma_weight_type(static_cast<uint32_t>(src_of(n, t, 0).type))) return Support::no;
  const int64_t cols = src_of(n, t, 1).rows();
  if (cols < kMmaMinColumns || (cols + 63) / 64 > kMaxTiles) return Support::no;
  return matmul(n, t, f);
}
// Experts need a few tokens each on average, or most 64-pair tiles would hold a pair or two
// and dequantize a whole expert for it.
Support matmul_id_mma(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  if (n.src[0] < 0 || n.src[2] < 0 || !mma_weight_type(static_cast<uint32_t>(src_of(n, t, 0).type))) return Support::no;
  const GraphTensor& ids = src_of(n, t, 2);
  const int64_t experts = src_of(n, t, 0).ne[2], pairs = ids.ne[0] * ids.ne[1];
  if (ids.ne[1] < kMmaMinColumns || pairs < 4 * experts || (pairs + 63) / 64 + experts > kMaxTiles) return Support::no;
  return matmul_id(n, t, f);
}
int run_matmul_mma(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_matmul_mma(rec, host, s);
}
int run_matmul_id_mma(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_matmul_id_mma(rec, host, s);
}

Support matmul_q8(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  return n.src[0] >= 0 && q8_weight_type(static_cast<uint32_t>(src_of(n, t, 0).type)) ? matmul(n, t, f) : Support::no;
}
Support matmul_id_q8(const GraphNode& n, std::span<const GraphTensor> t, const Features& f) {
  return n.src[0] >= 0 && q8_weight_type(static_cast<uint32_t>(src_of(n, t, 0).type)) ? matmul_id(n, t, f) : Support::no;
}
int run_matmul_q8(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_matmul_q8(rec, host, s);
}
int run_matmul_id_q8(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_matmul_id_q8(rec, host, s);
}

int run_matmul(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_matmul(rec, host, s); }
int run_matmul_id(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_matmul_id(rec, host, s);
}
int run_get_rows(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_get_rows(rec, host, s);
}

constexpr std::string_view kQ8Path = "matmul: q8 activations, dp4a";
constexpr std::string_view kMmaPath = "matmul: f16 tensor cores for batches of 32+ columns";
constexpr KernelDef kDefs[] = {
    {OpKind::matmul, matmul_mma, run_matmul_mma, kMmaPath},
    {OpKind::matmul_id, matmul_id_mma, run_matmul_id_mma, kMmaPath, mma_id_scratch_bytes},
    {OpKind::matmul, matmul_q8, run_matmul_q8, kQ8Path, q8_scratch_bytes},
    {OpKind::matmul_id, matmul_id_q8, run_matmul_id_q8, kQ8Path, q8_scratch_bytes},
    {OpKind::matmul, matmul, run_matmul},
    {OpKind::matmul_id, matmul_id, run_matmul_id},
    {OpKind::get_rows, get_rows, run_get_rows},
};

}  // namespace

std::span<const KernelDef> matmul_kernels() { return kDefs; }

std::vector<std::string> native_weight_types() {
  std::vector<std::string> names;
  for (const auto& t : kTypes) names.emplace_back(t.name);
  return names;
}

}  // namespace sy::cuda
