// Rotary embeddings on F32 tensors of any strides (rope.cu); positions dense I32, one per
// token (four per token, section-major, for the multi-section mode), optional F32 frequency
// factors, one per rotated pair.
#include "kernels/kernel.hpp"

namespace sy::cuda {
namespace {

// Packed 4-byte elements (strides of size-1 dimensions do not matter): the kernel indexes
// positions and factors as flat arrays.
bool dense4(const GraphTensor& t, StorageType type, int64_t count) {
  if (t.type != type || t.elements() != count) return false;
  int64_t want = 4;
  for (int d = 0; d < 4; ++d) {
    if (t.ne[d] > 1 && t.nb[d] != want) return false;
    want *= t.ne[d];
  }
  return true;
}

Support rope(const GraphNode& n, std::span<const GraphTensor> t, const Features&) {
  if (n.dst < 0 || n.src[0] < 0 || n.src[1] < 0) return Support::no;
  for (int s = 3; s < kMaxSources; ++s)
    if (n.src[s] >= 0) return Support::no;
  const auto &x = src_of(n, t, 0), &y = dst_of(n, t), &pos = src_of(n, t, 1);
  if (!f32_layout(x) || !f32_layout(y) || !same_shape(x, y)) return Support::no;
  const int mode = n.i[0], n_dims = n.i[1];
  if (mode < 0 || mode > 2 || n_dims <= 0 || n_dims % 2 != 0 || n_dims > x.ne[0]) return Support::no;
  if (mode == 2 && n.i[2] + n.i[3] + n.i[4] + n.i[5] <= 0) return Support::no;
  if (!dense4(pos, StorageType::I32, x.ne[2] * (mode == 2 ? 4 : 1))) return Support::no;
  if (n.src[2] >= 0) {
    if (!dense4(src_of(n, t, 2), StorageType::F32, n_dims / 2)) return Support::no;
  }
  return Support::yes;
}

int run(const GraphNode&, const NodeRecord* rec, const NodeRecord& host, Stream s) { return launch_rope(rec, host, s); }

constexpr KernelDef kDefs[] = {{OpKind::rope, rope, run}};

}  // namespace

std::span<const KernelDef> rope_kernels() { return kDefs; }

}  // namespace sy::cuda
