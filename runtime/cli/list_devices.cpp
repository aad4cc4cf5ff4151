#include "cli/list_devices.hpp"

#include <ostream>

#include "registry/registry.hpp"
#include "util/bytes.hpp"

namespace sy::cli {

int list_devices(std::ostream& out) {
  std::vector<std::string> warnings;
  registry::Registry reg(registry::default_search_path({}, warnings));
  const auto names = reg.names(ComponentKind::backend);
  if (names.empty()) {
    out << "No backend plugins are installed (see `switchyard plugins`).\n";
    return 1;
  }
  out << "Available devices (name for -dev and placement rules, description, free / total memory):\n";
  for (const auto& name : names) {
    ParamMap params;
    for (const auto& p : reg.manifest(*reg.find(ComponentKind::backend, name)).params)
      if (p.def) params.set(p.name, *p.def);
    auto be = reg.create_backend(name, params);
    if (!be) {
      out << "  " << name << ": no device here (" << be.status().message() << ")\n";
      continue;
    }
    for (size_t i = 0; i < (*be)->device_count(); ++i) {
      const DeviceInfo d = (*be)->device(i).info();
      out << "  " << d.name << ": " << d.description << " (" << device_kind_name(d.kind) << "), "
          << util::human_bytes(d.free_memory) << " free of " << util::human_bytes(d.total_memory) << "\n";
    }
  }
  return 0;
}

}  // namespace sy::cli
