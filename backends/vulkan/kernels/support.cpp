// Layout checks shared by the kernels' supports().
#include <algorithm>
#include <limits>

#include "kernel.hpp"

namespace sy::vulkan {

bool is_contiguous(const GraphTensor& t) {
  const auto* info = storage_type_info(static_cast<uint32_t>(t.type));
  if (!info || info->block_size == 0) return false;
  const auto row = storage_row_bytes(t.type, static_cast<uint64_t>(t.ne[0]));
  if (!row) return false;
  if (info->block_size == 1 && t.ne[0] > 1 && t.nb[0] != static_cast<int64_t>(info->block_bytes)) return false;
  int64_t expect = static_cast<int64_t>(*row);
  for (int d = 1; d < 4; ++d) {
    // A dimension of size 1 is never stepped over, so its stride does not matter.
    if (t.ne[d] > 1 && t.nb[d] != expect) return false;
    expect *= t.ne[d];
  }
  return true;
}

Launch spread_groups(std::string_view shader, int64_t groups) {
  constexpr int64_t kMaxGroupsPerDim = 65535;
  Launch l;
  l.shader = shader;
  l.groups[0] = static_cast<uint32_t>(std::min(groups, kMaxGroupsPerDim));
  l.groups[1] = static_cast<uint32_t>((groups + l.groups[0] - 1) / l.groups[0]);
  return l;
}

bool strides_fit(const GraphTensor& t) {
  constexpr int64_t lim = std::numeric_limits<int32_t>::max();
  // A dimension of size 1 is never stepped over; the executor records its stride as 0.
  for (int d = 0; d < 4; ++d)
    if (t.ne[d] < 0 || t.ne[d] > lim || (t.ne[d] > 1 && (t.nb[d] < 0 || t.nb[d] > lim))) return false;
  return true;
}

}  // namespace sy::vulkan
