#include "model/prefault.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "log/log.hpp"

namespace sy::model {

uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

uint64_t prefault(std::span<const MappedRange> ranges) {
#ifdef MADV_POPULATE_READ
  auto lg = log::get("model");
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // Page-aligned and merged: tensors are adjacent in the file, so this is a few calls.
  std::vector<std::pair<uintptr_t, uintptr_t>> spans;
  for (const auto& [p, n] : ranges) {
    if (n == 0) continue;
    const auto b = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    const auto e = (reinterpret_cast<uintptr_t>(p) + n + page - 1) & ~(page - 1);
    spans.emplace_back(b, e);
  }
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<uintptr_t, uintptr_t>> merged;
  uint64_t total = 0;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, s.second);
    else
      merged.push_back(s);
  }
  for (const auto& m : merged) total += m.second - m.first;
  const uint64_t avail = mem_available();
  if (total == 0 || avail == 0 || total > avail / 10 * 9) {
    lg->debug("prefault skipped: {} bytes mapped, {} available", total, avail);
    return 0;
  }
  uint64_t done = 0;
  for (const auto& m : merged) {
    if (madvise(reinterpret_cast<void*>(m.first), m.second - m.first, MADV_POPULATE_READ) != 0) {
      // EINVAL: a kernel before 5.14; the pages then fault in on first use, as before.
      lg->debug("prefault stopped: {}", std::strerror(errno));
      break;
    }
    done += m.second - m.first;
  }
  return done;
#else
  (void)ranges;
  return 0;
#endif
}

}  // namespace sy::model
