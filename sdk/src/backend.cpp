#include "switchyard/backend.hpp"

#include "switchyard/params.hpp"

namespace sy {

std::string_view buffer_kind_name(BufferKind k) noexcept {
  switch (k) {
    case BufferKind::device_local: return "device_local";
    case BufferKind::host_mapped: return "host_mapped";
    case BufferKind::staging: return "staging";
  }
  return "?";
}

Result<std::vector<size_t>> select_devices(const ParamMap& params, size_t available, std::string_view backend) {
  std::vector<size_t> out;
  const auto wanted = params.get_int_list("devices");
  if (!wanted || wanted->empty()) {
    for (size_t i = 0; i < available; ++i) out.push_back(i);
    return out;
  }
  for (int64_t w : *wanted) {
    if (w < 0 || static_cast<uint64_t>(w) >= available)
      return error::invalid_argument(std::string(backend) + ": device " + std::to_string(w) +
                                     " does not exist (this machine has " + std::to_string(available) + ")");
    out.push_back(static_cast<size_t>(w));
  }
  return out;
}

}  // namespace sy
