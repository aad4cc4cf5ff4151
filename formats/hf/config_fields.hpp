// Typed reads of config.json fields, shared by the architectures' config readers: each
// problem becomes a sentence naming the field ("text_config.hidden_size") and the fix.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "names_text.hpp"
#include "switchyard/status.hpp"

namespace sy::hf {

// Far beyond any published model; a value past these is a damaged config, refused before
// anything is sized from it.
constexpr int64_t kMaxWidth = int64_t{1} << 22;
constexpr int64_t kMaxCount = int64_t{1} << 16;

// Reads config.json fields, keeping the first problem as a sentence naming the field.
class Fields {
 public:
  Fields(const nlohmann::json& j, std::string file, std::string where) : j_(j), file_(std::move(file)), where_(std::move(where)) {}

  std::optional<int64_t> integer(const char* key, std::optional<int64_t> def, int64_t lo, int64_t hi) {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (!def) fail("'" + where_ + key + "' is missing; the model's " + std::string(key) + " cannot be guessed");
      return def;
    }
    if (!it->is_number_integer() && !it->is_number_unsigned()) {
      fail("'" + where_ + key + "' is " + quoted_text(it->dump(), 40) + "; it must be a whole number");
      return def;
    }
    const auto v = it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                       ? INT64_MAX
                       : it->get<int64_t>();
    if (v < lo || v > hi) {
      fail("'" + where_ + key + "' is " + std::to_string(v) + "; it must be between " + std::to_string(lo) + " and " +
           std::to_string(hi));
      return def;
    }
    return v;
  }

  std::optional<double> number(const char* key) {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0) {
      fail("'" + where_ + key + "' is " + quoted_text(it->dump(), 40) + "; it must be a positive number");
      return std::nullopt;
    }
    return it->get<double>();
  }

  std::optional<bool> boolean(const char* key) {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) {
      fail("'" + where_ + key + "' is " + quoted_text(it->dump(), 40) + "; it must be true or false");
      return std::nullopt;
    }
    return it->get<bool>();
  }

  void fail(const std::string& why) {
    if (status_) status_ = error::invalid_argument(file_ + ": " + why);
  }
  [[nodiscard]] const Status& status() const { return status_; }

 private:
  const nlohmann::json& j_;
  std::string file_, where_;
  Status status_ = Status::ok();
};

}  // namespace sy::hf
