#include "serving/json_constraint.hpp"

#include <utility>

namespace sy::serving {

JsonConstraint::JsonConstraint(std::span<const std::string> pieces, std::span<const uint8_t> is_special,
                               std::span<const int32_t> end_ids)
    : vocab_(std::make_shared<const JsonVocab>(pieces, is_special, end_ids)) {}

JsonConstraint::JsonConstraint(std::shared_ptr<const JsonVocab> vocab) : vocab_(std::move(vocab)) {}

}  // namespace sy::serving
