#include "conformance/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace sy::conformance {
namespace {

std::string sci(double v) {
  if (std::isinf(v)) return "inf";
  if (std::isnan(v)) return "nan";
  char b[32];
  std::snprintf(b, sizeof b, "%.2e", v);
  return b;
}

std::string fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

size_t count(const std::vector<CaseResult>& v, Outcome o) {
  size_t n = 0;
  for (const auto& c : v) n += c.outcome == o;
  return n;
}

size_t count(const std::vector<FixtureResult>& v, Outcome o) {
  size_t n = 0;
  for (const auto& c : v) n += c.outcome == o;
  return n;
}

}  // namespace

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::fail: return "fail";
    case Outcome::unsupported: return "unsupported";
    case Outcome::error: return "error";
  }
  return "?";
}

int Report::exit_code() const {
  for (const auto& c : cases)
    if (c.outcome == Outcome::fail || c.outcome == Outcome::error ||
        (require_all && c.outcome == Outcome::unsupported &&
         std::find(may_refuse.begin(), may_refuse.end(), c.op) == may_refuse.end()))
      return 1;
  for (const auto& f : fixtures)
    if (f.outcome == Outcome::fail || f.outcome == Outcome::error) return 1;
  return 0;
}

void print_text(const Report& r, std::ostream& out) {
  out << "conformance: backend " << r.backend << ", device " << r.device << "\n"
      << "reference: " << r.reference << "\n";
  for (const auto& n : r.notes) out << "note: " << n << "\n";
  for (const auto& c : r.cases) {
    if (c.outcome == Outcome::fail)
      out << "FAIL " << c.name << ": error " << sci(c.error) << " > tolerance " << sci(c.tolerance) << " ("
          << c.detail << ")\n";
    else if (c.outcome == Outcome::error)
      out << "ERROR " << c.name << ": " << c.detail << "\n";
  }
  for (const auto& f : r.fixtures) {
    if (f.outcome == Outcome::error) out << "ERROR fixture " << f.name << ": " << f.detail << "\n";
    if (f.outcome != Outcome::fail) continue;
    out << "FAIL fixture " << f.name << ": max |logit diff| " << fixed(f.max_abs) << " (tolerance "
        << fixed(f.max_abs_tolerance) << "), rms " << fixed(f.rms) << " (" << fixed(f.rms_tolerance) << "), "
        << f.argmax_misses << " required argmax missed, greedy ids as the CPU's for " << f.greedy_same << " of "
        << f.greedy_total << " (" << f.greedy_required << " required)\n";
  }
  // Unsupported cases by op: which types, so a backend author sees what is missing.
  std::map<OpKind, std::pair<size_t, size_t>> per_op;  // unsupported, total
  std::map<OpKind, std::set<std::string>> types;
  for (const auto& c : r.cases) {
    auto& [u, t] = per_op[c.op];
    ++t;
    if (c.outcome == Outcome::unsupported) {
      ++u;
      types[c.op].insert(std::string(storage_type_name(c.type)));
    }
  }
  const size_t unsupported = count(r.cases, Outcome::unsupported);
  if (unsupported > 0) {
    out << (r.require_all ? "UNSUPPORTED" : "unsupported") << " (" << unsupported << " cases):\n";
    for (const auto& [op, n] : per_op) {
      if (n.first == 0) continue;
      out << "  " << op_name(op) << ": " << n.first << " of " << n.second << " cases (";
      bool first = true;
      for (const auto& t : types[op]) out << (first ? "" : " ") << t, first = false;
      out << ")\n";
    }
  }
  out << "summary: " << r.cases.size() << " cases: " << count(r.cases, Outcome::pass) << " passed, "
      << count(r.cases, Outcome::fail) << " failed, " << count(r.cases, Outcome::error) << " errors, " << unsupported
      << " unsupported";
  if (!r.fixtures.empty())
    out << "; " << r.fixtures.size() << " fixtures: " << count(r.fixtures, Outcome::pass) << " passed, "
        << count(r.fixtures, Outcome::fail) << " failed, " << count(r.fixtures, Outcome::error) << " errors";
  out << (r.exit_code() == 0 ? " -> PASS" : " -> FAIL") << "\n";
}

nlohmann::json to_json(const Report& r) {
  using nlohmann::json;
  json j{{"backend", r.backend}, {"device", r.device}, {"reference", r.reference}, {"require_all", r.require_all},
         {"notes", r.notes}, {"cases", json::array()}, {"fixtures", json::array()}};
  // JSON has no infinity: an unbounded error (NaN or infinite output) is null.
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  for (const auto& c : r.cases)
    j["cases"].push_back({{"name", c.name}, {"op", std::string(op_name(c.op))},
                          {"type", std::string(storage_type_name(c.type))}, {"outcome", outcome_name(c.outcome)},
                          {"error", num(c.error)}, {"tolerance", c.tolerance}, {"tolerance_reason", c.tolerance_why},
                          {"detail", c.detail}});
  for (const auto& f : r.fixtures)
    j["fixtures"].push_back({{"name", f.name}, {"outcome", outcome_name(f.outcome)}, {"max_abs_logit_diff", num(f.max_abs)},
                             {"max_abs_tolerance", f.max_abs_tolerance}, {"rms_logit_diff", num(f.rms)},
                             {"rms_tolerance", f.rms_tolerance}, {"required_argmax_misses", f.argmax_misses},
                             {"greedy_same", f.greedy_same}, {"greedy_required", f.greedy_required},
                             {"greedy_total", f.greedy_total}, {"bytes_per_token", f.bytes_per_token}, {"detail", f.detail}});
  j["summary"] = {{"cases", r.cases.size()},
                  {"passed", count(r.cases, Outcome::pass)},
                  {"failed", count(r.cases, Outcome::fail)},
                  {"errors", count(r.cases, Outcome::error)},
                  {"unsupported", count(r.cases, Outcome::unsupported)},
                  {"fixtures", r.fixtures.size()},
                  {"fixtures_passed", count(r.fixtures, Outcome::pass)},
                  {"exit_code", r.exit_code()}};
  return j;
}

}  // namespace sy::conformance
