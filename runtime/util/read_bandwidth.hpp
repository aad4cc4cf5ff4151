// The machine's memory read bandwidth: threads reading disjoint parts of a buffer far
// larger than any cache, best of a few passes. `bench` measures it once per run with the
// row's threads (the denominator of a row's "share of bandwidth"); `plan` uses it for the
// decode ceiling.
#pragma once

#include <cstddef>

namespace sy::util {

/// Bytes per second read by `threads` threads over a buffer of `bytes` (touched first, so
/// page faults are not timed); the best of `passes`. Uses AVX2 loads where the CPU has them.
double measure_read_bandwidth(size_t bytes, int threads, int passes = 3);

}  // namespace sy::util
