// bench statistics against hand computations: llama-bench's mean and sample standard
// deviation, and the median and range --compare reports.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "bench/stats.hpp"

using namespace sy;

TEST_CASE("bench stats: mean, sample sd, median, range", "[bench]") {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32, sample variance 32/7.
  const std::vector<double> xs{9, 4, 2, 5, 4, 7, 4, 5};
  const auto s = bench::summarize(xs);
  CHECK(s.n == 8);
  CHECK(s.mean == Approx(5.0));
  CHECK(s.sd == Approx(std::sqrt(32.0 / 7.0)));
  CHECK(s.median == Approx(4.5));
  CHECK(s.min == 2.0);
  CHECK(s.max == 9.0);
}

TEST_CASE("bench stats: one sample has no spread; an odd count has a middle median", "[bench]") {
  const std::vector<double> one{3.5};
  const auto a = bench::summarize(one);
  CHECK(a.mean == 3.5);
  CHECK(a.sd == 0.0);
  CHECK(a.median == 3.5);
  const std::vector<double> three{10, 1, 4};
  CHECK(bench::summarize(three).median == 4.0);
  CHECK(bench::summarize(std::vector<double>{}).n == 0);
}
