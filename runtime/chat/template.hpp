// Chat templates: a sandboxed Jinja2 interpreter with the environment Hugging Face
// transformers renders chat templates in (trim_blocks, lstrip_blocks, tojson without HTML
// escaping, raise_exception, strftime_now, an immutable sandbox). Rendering is bounded in
// steps, output size and call depth, so a hostile template cannot hang or exhaust memory;
// it has no access to files or the environment.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/ast.hpp"
#include "chat/value.hpp"
#include "switchyard/status.hpp"

namespace sy::chat {

struct RenderOptions {
  int64_t max_steps = 10'000'000;     ///< nodes and expressions evaluated
  size_t max_output = 64u << 20;      ///< bytes of output
  int max_depth = 100;                ///< nested macro calls
  std::optional<std::tm> now;         ///< strftime_now's clock (local time when unset)
};

/// Why a render failed (the message is the template's own for raise_exception).
struct RenderFailure {
  enum class Kind { raise_exception, sandbox, undefined, type, limit, syntax } kind = Kind::type;
  std::string message;
  int line = 0, col = 0;
};

/// The names of the filters and tests templates can use (Jinja2's, as transformers has them).
std::vector<std::string> filter_names();
std::vector<std::string> test_names();

class Template {
 public:
  /// Parses a template; `name` labels error messages (a file name).
  static Result<Template> parse(std::string_view source, std::string name);

  /// Renders with `context`'s keys as variables (`context` must be a mapping). On failure
  /// the status message is "name:line:column: message" and `failure` (when given) says more.
  Result<std::string> render(const Value& context, const RenderOptions& opts = {}, RenderFailure* failure = nullptr) const;

 private:
  std::shared_ptr<const Body> body_;
  std::string name_;
};

}  // namespace sy::chat
