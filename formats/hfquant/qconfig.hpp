// Typed reads of quantization_config fields: a missing or mistyped field is a sentence naming
// config.json, the field and what it should hold.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "switchyard/status.hpp"

namespace sy::hfq {

class QConfig {
 public:
  QConfig(const nlohmann::json& q, std::string file) : q_(q), file_(std::move(file)) {}
  /// An integer field; `fallback` when absent (nullopt: required).
  Result<int64_t> integer(const std::string& key, std::optional<int64_t> fallback) const;
  Result<bool> boolean(const std::string& key, std::optional<bool> fallback) const;
  Result<std::string> text(const std::string& key, std::optional<std::string> fallback) const;
  /// "config.json's quantization_config.bits is 5; ..." prefix for a refusal.
  [[nodiscard]] std::string where(const std::string& key) const;
  [[nodiscard]] const nlohmann::json& json() const { return q_; }

 private:
  const nlohmann::json& q_;
  std::string file_;
};

}  // namespace sy::hfq
