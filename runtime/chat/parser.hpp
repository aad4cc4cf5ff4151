// Parsing template source into statement trees (see ast.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "chat/ast.hpp"
#include "switchyard/status.hpp"

namespace sy::chat {

/// Parses `source`; errors read "name:line:column: what".
Result<std::shared_ptr<const Body>> parse_template(std::string_view source, const std::string& name);

}  // namespace sy::chat
