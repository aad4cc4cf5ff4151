#include "switchyard/status.hpp"

namespace sy {

const char* status_code_name(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid_argument";
    case StatusCode::not_found: return "not_found";
    case StatusCode::io_error: return "io_error";
    case StatusCode::corrupt: return "corrupt";
    case StatusCode::unsupported: return "unsupported";
    case StatusCode::unavailable: return "unavailable";
    case StatusCode::out_of_memory: return "out_of_memory";
    case StatusCode::out_of_range: return "out_of_range";
    case StatusCode::exhausted: return "exhausted";
    case StatusCode::internal: return "internal";
  }
  return "unknown";
}

}  // namespace sy
