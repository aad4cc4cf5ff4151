#include "quant_scheme.hpp"

namespace sy::hf {

TensorFinder::TensorFinder(const Checkpoint& ck) : ck_(ck) {}

FoundTensor TensorFinder::find(const std::string& name) const {
  for (const auto& shard : ck_.shards)
    if (const StTensor* t = shard->find(name)) return {t, shard->data(*t), shard->path().string()};
  return {};
}

}  // namespace sy::hf
