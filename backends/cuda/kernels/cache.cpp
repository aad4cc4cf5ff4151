// The KV cache ops (cache.cu): set_rows into f32, f16, bf16, q8_0 and q4_0 caches, and
// attention over such caches through the block tables (head sizes up to 1024 for K, 512 for V).
#include <limits>

#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

bool cache_type(StorageType t) {
  return t == StorageType::F32 || t == StorageType::F16 || t == StorageType::BF16 || t == StorageType::Q8_0 ||
         t == StorageType::Q4_0;
}

bool plain(const GraphTensor& t, StorageType type) {
  if (t.type != type || t.elements() <= 0) return false;
  for (int64_t b : t.nb)
    if (b % 4 != 0) return false;
  return true;
}

bool id_list(const GraphTensor& t, int64_t n) {
  return plain(t, StorageType::I32) && t.ne[0] == n && t.ne[1] == 1 && t.ne[2] == 1 && t.ne[3] == 1;
}

// A cache [dim, heads, cells]: whole blocks, plain elements packed in a row, 2-byte aligned
// strides (the kernels read f16 scales byte by byte; f32 needs 4).
bool cache_ok(const GraphTensor& c) {
  if (!cache_type(c.type) || c.ne[0] <= 0 || c.ne[1] <= 0 || c.ne[2] <= 0 || c.ne[3] != 1) return false;
  const auto& info = storage_type_info(c.type);
  if (c.ne[0] % info.block_size != 0) return false;
  if (info.block_size == 1 && c.ne[0] > 1 && c.nb[0] != info.block_bytes) return false;
  const int64_t align = c.type == StorageType::F32 ? 4 : 2;
  for (int d = 1; d < 4; ++d)
    if (c.ne[d] > 1 && c.nb[d] % align != 0) return false;
  return true;
}

Support set_rows(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 2)) return Support::no;
  const auto &x = src_of(n, t, 0), &slots = src_of(n, t, 1), &d = dst_of(n, t);
  if (!plain(x, StorageType::F32) || (x.ne[0] > 1 && x.nb[0] != 4) || !id_list(slots, x.rows())) return Support::no;
  if (!cache_ok(d) || d.ne[0] * d.ne[1] != x.ne[0]) return Support::no;
  // The k elements of a cell are written as one packed row, as the CPU does.
  const auto& info = storage_type_info(d.type);
  if (d.ne[1] > 1 && d.nb[1] != static_cast<int64_t>(d.ne[0] / info.block_size * info.block_bytes)) return Support::no;
  return Support::yes;
}

Support attention(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (!sources_are(n, 6) || n.i[0] < 1) return Support::no;
  const auto &q = src_of(n, t, 0), &k = src_of(n, t, 1), &v = src_of(n, t, 2);
  const auto &pos = src_of(n, t, 3), &seq = src_of(n, t, 4), &tables = src_of(n, t, 5), &o = dst_of(n, t);
  const int64_t dk = q.ne[0], heads = q.ne[1], tokens = q.ne[2];
  if (!plain(q, StorageType::F32) || q.ne[3] != 1 || dk > kMaxHeadK) return Support::no;
  if (heads > std::numeric_limits<int32_t>::max() || tokens > 65535) return Support::no;
  if (!cache_ok(k) || !cache_ok(v) || k.ne[0] != dk || heads % k.ne[1] != 0) return Support::no;
  if (v.ne[1] != k.ne[1] || v.ne[2] != k.ne[2] || v.ne[0] > kMaxHeadV) return Support::no;
  if (!id_list(pos, tokens) || !id_list(seq, tokens)) return Support::no;
  if (!plain(tables, StorageType::I32) || tables.ne[2] != 1 || tables.ne[3] != 1) return Support::no;
  if (!plain(o, StorageType::F32) || o.ne[0] != v.ne[0] || o.ne[1] != heads || o.ne[2] != tokens || o.ne[3] != 1)
    return Support::no;
  return Support::yes;
}

int run_set_rows(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_set_rows(rec, host, s); }
int run_attention(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) {
  return launch_attention(rec, host, s);
}

constexpr KernelDef kDefs[] = {
    {OpKind::set_rows, set_rows, run_set_rows},
    {OpKind::attention, attention, run_attention},
};

}  // namespace

std::span<const KernelDef> cache_kernels() { return kDefs; }

}  // namespace sy::cuda
