#include "qconfig.hpp"

namespace sy::hfq {

std::string QConfig::where(const std::string& key) const { return file_ + ": quantization_config." + key; }

Result<int64_t> QConfig::integer(const std::string& key, std::optional<int64_t> fallback) const {
  const auto it = q_.find(key);
  if (it == q_.end() || it->is_null()) {
    if (fallback) return *fallback;
    return error::invalid_argument(where(key) + " is missing; the quantizer that wrote the checkpoint always sets it");
  }
  if (!it->is_number_integer())
    return error::invalid_argument(where(key) + " is " + it->dump() + ", not an integer");
  return it->get<int64_t>();
}

Result<bool> QConfig::boolean(const std::string& key, std::optional<bool> fallback) const {
  const auto it = q_.find(key);
  if (it == q_.end() || it->is_null()) {
    if (fallback) return *fallback;
    return error::invalid_argument(where(key) + " is missing; the quantizer that wrote the checkpoint always sets it");
  }
  if (!it->is_boolean()) return error::invalid_argument(where(key) + " is " + it->dump() + ", not true or false");
  return it->get<bool>();
}

Result<std::string> QConfig::text(const std::string& key, std::optional<std::string> fallback) const {
  const auto it = q_.find(key);
  if (it == q_.end() || it->is_null()) {
    if (fallback) return *fallback;
    return error::invalid_argument(where(key) + " is missing; the quantizer that wrote the checkpoint always sets it");
  }
  if (!it->is_string()) return error::invalid_argument(where(key) + " is " + it->dump() + ", not a string");
  return it->get<std::string>();
}

}  // namespace sy::hfq
