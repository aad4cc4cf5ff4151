#include "cli/tensor_progress.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "util/parse_number.hpp"

namespace sy::cli {

std::string mib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

int64_t stop_after_from_env() {
  const char* v = std::getenv("SWITCHYARD_TEST_STOP_AFTER_TENSORS");
  return v ? util::parse_integer<int64_t>(v, 1, 1 << 30).value : 0;
}

gguf_tools::Progress tensor_progress(int64_t stop_after) {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  return [tty, stop_after](const gguf_tools::TensorReport& r) {
    if (tty) {
      const int width = 30, done = static_cast<int>(width * (r.index + 1) / r.count);
      std::fprintf(stderr, "\r[%s%s] %zu/%zu %-40.40s", std::string(static_cast<size_t>(done), '#').c_str(),
                   std::string(static_cast<size_t>(width - done), '.').c_str(), r.index + 1, r.count, r.name.c_str());
      if (r.index + 1 == r.count) std::fprintf(stderr, "\n");
    } else {
      std::fprintf(stderr, "[%4zu/%4zu] %-40s %7s -> %-7s %10s -> %s\n", r.index + 1, r.count, r.name.c_str(),
                   std::string(storage_type_name(r.from)).c_str(), std::string(storage_type_name(r.to)).c_str(),
                   mib(r.bytes_in).c_str(), mib(r.bytes_out).c_str());
    }
    if (stop_after > 0 && static_cast<int64_t>(r.index + 1) == stop_after) std::raise(SIGSTOP);
  };
}

}  // namespace sy::cli
