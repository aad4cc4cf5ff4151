// bench's llama-bench-style lists and rows: comma lists and repeated flags, errors that
// name the flag and the item, and the p x n x t x d cross product without empty rows.
#include <catch2/catch.hpp>

#include "bench/rows.hpp"

using namespace sy;

TEST_CASE("bench lists: comma lists and repeated flags add up in order", "[bench]") {
  auto v = bench::parse_int_list("-p", {"128,256", "512"}, 0, 1000);
  REQUIRE(v);
  CHECK(*v == std::vector<int64_t>{128, 256, 512});
}

TEST_CASE("bench lists: a bad item is named with its flag", "[bench]") {
  auto bad = bench::parse_int_list("-p", {"16,x"}, 0, 1000);
  REQUIRE_FALSE(bad);
  CHECK(bad.status().message().rfind("-p 'x': expected integers from 0 to 1000", 0) == 0);
  auto neg = bench::parse_int_list("-n", {"-3"}, 0, 1000);
  REQUIRE_FALSE(neg);
  CHECK(neg.status().message().rfind("-n '-3':", 0) == 0);
  auto big = bench::parse_int_list("-t", {"5000"}, 0, 4096);
  REQUIRE_FALSE(big);
  CHECK(big.status().message().rfind("-t '5000':", 0) == 0);
  for (const char* empty : {"", "1,,2", "4,"}) {
    auto e = bench::parse_int_list("-d", {empty}, 0, 1000);
    REQUIRE_FALSE(e);
    CHECK(e.status().message().find("an empty item") != std::string::npos);
  }
}

TEST_CASE("bench rows: the cross product, last list fastest, without p=0 n=0", "[bench]") {
  const auto rows = bench::cross_rows({0, 512}, {0, 64}, {2}, {0, 4096});
  // (p, n) pairs (0,64), (512,0), (512,64), each at two depths: 6 rows; (0,0) dropped.
  REQUIRE(rows.size() == 6);
  const int64_t want[6][3] = {{0, 64, 0}, {0, 64, 4096}, {512, 0, 0}, {512, 0, 4096}, {512, 64, 0}, {512, 64, 4096}};
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].prompt == want[i][0]);
    CHECK(rows[i].gen == want[i][1]);
    CHECK(rows[i].depth == want[i][2]);
    CHECK(rows[i].threads == 2);
  }
  CHECK(bench::cross_rows({0}, {0}, {1, 2}, {0}).empty());
}

TEST_CASE("bench rows: llama-bench's test names", "[bench]") {
  CHECK(bench::test_name("pp", 512, 0) == "pp512");
  CHECK(bench::test_name("tg", 128, 4096) == "tg128 @ d4096");
}
