#include <catch2/catch.hpp>

#include "util/suggest.hpp"

TEST_CASE("edit distance counts insertions, deletions, substitutions and swaps", "[util]") {
  CHECK(sy::edit_distance("", "abc") == 3);
  CHECK(sy::edit_distance("kitten", "sitting") == 3);
  CHECK(sy::edit_distance("valdiate", "validate") == 1);  // swapped neighbours
  CHECK(sy::edit_distance("Context", "context") == 0);    // case does not count
}

TEST_CASE("suggestions only for plausible typos", "[util]") {
  const std::vector<std::string> keys{"length", "kv_type", "flash_attention", "batch", "ubatch", "parallel"};
  CHECK(sy::closest("flash_atention", keys) == "flash_attention");
  CHECK(sy::closest("lenght", keys) == "length");
  CHECK(sy::closest("flash", keys) == "flash_attention");  // a prefix
  CHECK_FALSE(sy::closest("temperature", keys).has_value());
  CHECK_FALSE(sy::closest("x", std::vector<std::string>{"t", "p"}).has_value());
  CHECK_FALSE(sy::closest("abc", {}).has_value());
}
