#include <algorithm>
#include <iterator>

#include "kernels/kernel.hpp"

namespace sy::cuda {

bool f32_layout(const GraphTensor& t) {
  if (t.type != StorageType::F32 || t.elements() <= 0) return false;
  return std::all_of(std::begin(t.nb), std::end(t.nb), [](int64_t b) { return b % 4 == 0; });
}

bool same_shape(const GraphTensor& a, const GraphTensor& b) { return std::equal(std::begin(a.ne), std::end(a.ne), b.ne); }

bool sources_are(const GraphNode& n, int count) {
  if (n.dst < 0) return false;
  for (int s = 0; s < kMaxSources; ++s)
    if ((s < count) != (n.src[s] >= 0)) return false;
  return true;
}

}  // namespace sy::cuda
