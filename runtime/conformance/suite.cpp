#include "conformance/suite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "conformance/cases.hpp"
#include "conformance/run_op.hpp"
#include "conformance/suite_internal.hpp"
#include "conformance/tolerance.hpp"
#include "registry/registry.hpp"
#include "util/suggest.hpp"

namespace sy::conformance {
namespace {

Result<CaseFilter> filter_of(const Options& o) {
  CaseFilter f;
  std::vector<std::string> names;
  for (const OpKind op : all_ops()) names.emplace_back(op_name(op));
  for (const auto& n : o.ops) {
    bool found = false;
    for (const OpKind op : all_ops())
      if (op_name(op) == n) f.ops.push_back(op), found = true;
    if (!found) {
      const auto s = closest(n, names);
      return error::invalid_argument("--ops: no op named '" + n + "'" + (s ? "; did you mean '" + *s + "'?" : ""));
    }
  }
  for (const auto& n : o.types) {
    const auto t = storage_type_from_name(n);
    if (!t) return error::invalid_argument("--types: no storage type named '" + n + "' (F32, F16, Q4_K, ...)");
    f.types.push_back(*t);
  }
  return f;
}

// Where in a tensor the flat logical index i lies: "(i0, i1, i2)".
std::string coords(const GraphTensor& t, size_t i) {
  std::string s = "(";
  auto rest = static_cast<int64_t>(i);
  int last = 3;
  while (last > 0 && t.ne[last] == 1) --last;
  for (int d = 0; d <= last; ++d) {
    s += (d ? ", " : "") + std::to_string(rest % t.ne[d]);
    rest /= t.ne[d];
  }
  return s + ")";
}

CaseResult check_case(Device& dev, Device& ref, const Case& c) {
  CaseResult r;
  r.name = c.name();
  r.op = c.op;
  r.type = c.type;
  const Tolerance tol = tolerance(c);
  r.tolerance = tol.max_rel;
  r.tolerance_why = tol.why;
  if (ask(dev, c) == Support::no) {
    r.outcome = Outcome::unsupported;
    return r;
  }
  r.outcome = Outcome::error;
  if (ask(ref, c) == Support::no) {
    r.detail = "the CPU reference does not take this case (a gap in the CPU backend or in the suite)";
    return r;
  }
  auto want = run_case(ref, c);
  if (!want) {
    r.detail = "the CPU reference failed: " + want.status().message();
    return r;
  }
  auto got = run_case(dev, c);
  if (!got) {
    r.detail = got.status().message();
    return r;
  }
  r.outcome = Outcome::pass;
  for (size_t k = 0; k < got->tensor.size(); ++k) {
    const Diff d = measure(got->values[k], want->values[k]);
    if (k > 0 && d.rel <= r.error) continue;  // the worst tensor is reported
    const auto& ct = c.tensors[static_cast<size_t>(got->tensor[k])];
    r.error = d.rel;
    r.detail = ct.role + " " + coords(ct.t, d.index) + ": " + std::to_string(d.got) + " vs reference " +
               std::to_string(d.want) + ", reference max |value| " + std::to_string(d.ref_max);
  }
  if (!(r.error <= r.tolerance)) r.outcome = Outcome::fail;
  return r;
}

}  // namespace

Status run_suite(const Options& o, Report& report, std::ostream& progress) {
  report.backend = o.backend;
  report.require_all = o.require_all;
  for (const auto& name : o.may_refuse) {
    const auto ops = all_ops();
    const auto it = std::find_if(ops.begin(), ops.end(), [&](OpKind k) { return op_name(k) == name; });
    if (it == ops.end()) return error::invalid_argument("--may-refuse: no op named '" + name + "'");
    report.may_refuse.push_back(*it);
  }
  auto filter = filter_of(o);
  if (!filter) return filter.status();
  std::error_code ec;
  if (!o.fixtures.empty() && !std::filesystem::is_directory(o.fixtures, ec))
    return error::invalid_argument("--fixtures: " + o.fixtures.string() + " is not a folder");

  std::vector<std::string> warnings;
  registry::Registry reg(registry::default_search_path(o.plugin_path, warnings));
  for (const auto& w : warnings) report.notes.push_back(w);
  {
    auto dev = open_device(reg, o.backend, o.device);
    if (!dev) return dev.status();
    const DeviceInfo info = dev->device->info();
    report.device = info.name + " (" + info.description + ")";
    auto ref = open_scalar_cpu(reg);
    if (!ref) return ref.status();
    report.reference = "cpu backend, " + ref->device->info().description;
    if (!o.fixtures_only)
      for (const Case& c : make_cases(*filter)) report.cases.push_back(check_case(*dev->device, *ref->device, c));
  }  // the fixture runs bring their own backends up
  if (!o.fixtures.empty()) run_fixtures(o, reg, report, progress);
  return Status::ok();
}

}  // namespace sy::conformance
