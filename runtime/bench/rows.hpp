// The rows of a `switchyard bench` run: llama-bench's comma lists (-p 128,512 or -p 128 -p
// 512) for prompt length, generated tokens, threads and depth, crossed into one row per
// combination.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchyard/status.hpp"

namespace sy::bench {

/// One measured configuration. threads 0: the pipeline's own setting (the cpu backend's auto).
struct RowSpec {
  int64_t prompt = 0, gen = 0, depth = 0;
  int threads = 0;
};

/// Every value of a list flag given as repeated flags, each possibly a comma list
/// ("-p 128,256 -p 512"), as integers in [lo, hi]. An error names the flag and the item:
/// "-p 'x': not an integer from 0 to ...".
Result<std::vector<int64_t>> parse_int_list(const std::string& flag, const std::vector<std::string>& given, int64_t lo,
                                            int64_t hi);

/// p x n x t x d in that nesting order (the last varies fastest), without rows that measure
/// nothing (p = 0 and n = 0).
std::vector<RowSpec> cross_rows(const std::vector<int64_t>& p, const std::vector<int64_t>& n,
                                const std::vector<int64_t>& t, const std::vector<int64_t>& d);

/// llama-bench's test names: "pp512", "tg128", with " @ d4096" when the depth is not 0.
std::string test_name(const char* kind, int64_t tokens, int64_t depth);

}  // namespace sy::bench
