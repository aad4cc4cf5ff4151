#include "pipeline/diagnostics.hpp"

#include <algorithm>

namespace sy::pipeline {

std::string format_diagnostic(const Diagnostic& d) {
  std::string out = d.loc.file;
  if (d.loc.line > 0) out += ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.column);
  out += ": ";
  if (d.warning) out += "warning: ";
  return out + d.message;
}

bool has_errors(const std::vector<Diagnostic>& diags) {
  return std::any_of(diags.begin(), diags.end(), [](const Diagnostic& d) { return !d.warning; });
}

}  // namespace sy::pipeline
