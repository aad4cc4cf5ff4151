// Located messages: "file:line:column: message", the form every editor can jump to.
#pragma once

#include <string>
#include <vector>

namespace sy::pipeline {

/// Where something came from. line/column are 1-based; line 0 means "no position"
/// (a --set override, or a whole file).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  Location loc;
  std::string message;
  bool warning = false;
};

/// "file:line:column: message" (or "file: message" without a position), with
/// "warning: " before the message for warnings.
std::string format_diagnostic(const Diagnostic& d);

/// True when any diagnostic is an error.
bool has_errors(const std::vector<Diagnostic>& diags);

}  // namespace sy::pipeline
