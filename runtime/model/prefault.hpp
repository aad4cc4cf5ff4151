// Page-table prefaulting of the weights the host reads in place from the file's mapping.
// Without it, the first decode steps fault every page in (about a second per 5 GiB here),
// which lands in the time to first token; llama.cpp maps with MAP_POPULATE for the same reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace sy::model {

/// A byte range of a mapping.
using MappedRange = std::pair<const std::byte*, size_t>;

/// MemAvailable from /proc/meminfo in bytes (it counts reclaimable page cache, which is
/// where an already-read model file sits); 0 when unknown.
uint64_t mem_available();

/// Prefaults `ranges` (read-only, MADV_POPULATE_READ) when together they fit in 90% of the
/// memory the kernel reports available, so a model larger than RAM is never forced in.
/// Returns the bytes prefaulted (0 when skipped or unsupported by the kernel).
uint64_t prefault(std::span<const MappedRange> ranges);

}  // namespace sy::model
