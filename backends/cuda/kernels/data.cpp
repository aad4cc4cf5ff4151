// copy with conversion, gather_cols and fp8_qdq (data.cu). The converted side of a copy is
// dense, as the CPU packs it; blocks run along the f32 side's rows.
#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

bool packed_type(StorageType t) {
  return t == StorageType::F16 || t == StorageType::BF16 || t == StorageType::Q8_0 || t == StorageType::Q4_0;
}

bool dense(const GraphTensor& t) {
  const auto& info = storage_type_info(t.type);
  if (t.ne[0] % info.block_size != 0) return false;
  int64_t want = static_cast<int64_t>(info.block_bytes);
  if (t.ne[0] > 1 && info.block_size == 1 && t.nb[0] != want) return false;
  want = t.ne[0] / info.block_size * info.block_bytes;
  for (int d = 1; d < 4; ++d) {
    if (t.ne[d] > 1 && t.nb[d] != want) return false;
    want *= t.ne[d];
  }
  return true;
}

Support copy(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 1)) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  if (x.elements() != y.elements() || x.elements() <= 0) return Support::no;
  if (x.type == StorageType::F32 && y.type == StorageType::F32) return f32_layout(x) && f32_layout(y) ? Support::yes : Support::no;
  const bool to_packed = x.type == StorageType::F32;
  const auto& f = to_packed ? x : y;  // the side of any layout
  const auto& p = to_packed ? y : x;  // the dense side
  if (!f32_layout(f) || !packed_type(p.type) || !dense(p)) return Support::no;
  const bool blocks = p.type == StorageType::Q8_0 || p.type == StorageType::Q4_0;
  return blocks && f.ne[0] % 32 != 0 ? Support::no : Support::yes;
}

Support gather_cols(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &x = src_of(n, t, 0), &ids = src_of(n, t, 1), &y = dst_of(n, t);
  if (!f32_layout(x) || !f32_layout(y) || ids.type != StorageType::I32 || ids.nb[0] % 4 != 0) return Support::no;
  if (ids.ne[0] != y.ne[0] || ids.ne[1] != 1 || ids.ne[2] != 1 || ids.ne[3] != 1) return Support::no;
  for (int d = 1; d < 4; ++d)
    if (x.ne[d] != y.ne[d]) return Support::no;
  return Support::yes;
}

// Up to 7 scale tensors of a few elements each: every thread reads them all.
constexpr int64_t kMaxScaleElements = 4096;

Support fp8_qdq(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.dst < 0 || n.src[0] < 0 || n.src[1] < 0) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t);
  if (!f32_layout(x) || !f32_layout(y) || !same_shape(x, y)) return Support::no;
  int64_t scales = 0;
  bool ended = false;
  for (int s = 1; s < kMaxSources; ++s) {
    if (n.src[s] < 0) {
      ended = true;
      continue;
    }
    if (ended || !f32_layout(src_of(n, t, s))) return Support::no;
    scales += src_of(n, t, s).elements();
  }
  return scales <= kMaxScaleElements ? Support::yes : Support::no;
}

int run_copy(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_copy(rec, host, s); }
int run_gather(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_gather_cols(rec, host, s);
}
int run_fp8(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_fp8_qdq(rec, host, s); }

constexpr KernelDef kDefs[] = {
    {OpKind::copy, copy, run_copy},
    {OpKind::gather_cols, gather_cols, run_gather},
    {OpKind::fp8_qdq, fp8_qdq, run_fp8},
};

}  // namespace

std::span<const KernelDef> data_kernels() { return kDefs; }

}  // namespace sy::cuda
