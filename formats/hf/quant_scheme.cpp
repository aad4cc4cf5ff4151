#include "quant_scheme.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace sy::hf {

TensorFinder::TensorFinder(const Checkpoint& ck) : ck_(ck) {}

FoundTensor TensorFinder::find(const std::string& name) const {
  for (const auto& shard : ck_.shards)
    if (const StTensor* t = shard->find(name)) {
      found_.push_back(shard->data(*t));
      return {t, found_.back(), shard->path().string()};
    }
  return {};
}

void TensorFinder::release_found() const noexcept {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (const auto& b : found_) {
    // Whole pages inside the tensor only: a neighbour's bytes may still be wanted.
    const auto begin = (reinterpret_cast<uintptr_t>(b.data()) + page - 1) & ~(page - 1);
    const auto end = (reinterpret_cast<uintptr_t>(b.data()) + b.size()) & ~(page - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
  found_.clear();
}

}  // namespace sy::hf
