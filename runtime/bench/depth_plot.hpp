// `bench --svg FILE`: generation speed against context depth, one line per runtime (and per
// thread count and generation length when the rows vary them), from the measured rows.
#pragma once

#include <string>
#include <vector>

#include "bench/figures.hpp"

namespace sy::bench {

/// The chart of the rows that generate (n > 0); model names the file in the title.
std::string depth_svg(const std::vector<RowResult>& rows, const std::string& model);

}  // namespace sy::bench
