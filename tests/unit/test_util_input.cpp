// The two gates every user-given value passes: util::read_file (files) and the checked
// number parsers. Expected values come from the C++ and POSIX rules stated beside them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "support.hpp"
#include "util/parse_number.hpp"
#include "util/read_file.hpp"

using namespace sy::util;

TEST_CASE("read_file: a file's bytes, and a sentence for a directory, a missing file, a too large one", "[util]") {
  sy::test::TempDir dir;
  const std::string bytes("a\0b\xff\n", 5);
  sy::test::write_file(dir / "f.txt", bytes);
  auto r = read_file(dir / "f.txt", "--file");
  REQUIRE(r);
  CHECK(r.value() == bytes);

  r = read_file(dir.path(), "--prompt-file");
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "--prompt-file '" + dir.path().string() + "' is a directory; give a file inside it");

  r = read_file(dir / "nope.txt", "--template");
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "--template '" + (dir / "nope.txt").string() + "' does not exist");

  r = read_file(dir / "f.txt", "--context", 4);
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "--context '" + (dir / "f.txt").string() +
                                    "' is 5 bytes, more than the 4 this input may have");

  r = read_file("", "--file");
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "--file is empty; give a file path");
}

TEST_CASE("read_optional_file: only a file that does not exist is absent", "[util]") {
  sy::test::TempDir dir;
  sy::test::write_file(dir / "c.json", "{}");
  auto r = read_optional_file(dir / "c.json", "the tokenizer config");
  REQUIRE(r);
  REQUIRE(r.value().has_value());
  CHECK(*r.value() == "{}");

  r = read_optional_file(dir / "nope.json", "the tokenizer config");
  REQUIRE(r);
  CHECK_FALSE(r.value().has_value());

  // A directory in the file's place is a mistake to report, not a missing optional file.
  r = read_optional_file(dir.path(), "the tokenizer config");
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "the tokenizer config '" + dir.path().string() + "' is a directory; give a file inside it");

  r = read_optional_file("", "the tokenizer config");
  REQUIRE_FALSE(r);
  CHECK(r.status().message() == "the tokenizer config is empty; give a file path");
}

TEST_CASE("read_file: files without a size (devices) are read to the end", "[util]") {
  // /dev/null is a character device: no size up front, end of file at once.
  auto r = read_file("/dev/null", "--file");
  REQUIRE(r);
  CHECK(r.value().empty());
}

TEST_CASE("check_input_file and check_output_path refuse directories before any work", "[util]") {
  sy::test::TempDir dir;
  CHECK(check_input_file(dir.path(), "--tokenizer").message() ==
        "--tokenizer '" + dir.path().string() + "' is a directory; give a file inside it");
  sy::test::write_file(dir / "t.json", "{}");
  CHECK(check_input_file(dir / "t.json", "--tokenizer"));
  CHECK(check_output_path(dir.path(), "-o").message() ==
        "-o '" + dir.path().string() + "' is a directory; give a file name (e.g. " + (dir.path() / "out").string() + ")");
  CHECK(check_output_path(dir / "missing" / "x.gguf", "-o").message() ==
        "-o '" + (dir / "missing" / "x.gguf").string() + "': the directory '" + (dir / "missing").string() +
            "' does not exist");
  CHECK(check_output_path(dir / "new.gguf", "-o"));
  CHECK(check_output_path("plain-name-in-cwd.gguf", "-o"));
}

TEST_CASE("parse_integer: whole text, type range and caller range", "[util]") {
  CHECK(parse_integer<int32_t>("2147483647").value == 2147483647);
  CHECK(parse_integer<int32_t>("2147483648").error == NumberError::out_of_range);  // 2^31
  CHECK(parse_integer<int32_t>("+7").value == 7);
  CHECK(parse_integer<int32_t>("-7").value == -7);
  CHECK(parse_integer<int32_t>("7 ").error == NumberError::malformed);
  CHECK(parse_integer<int32_t>("0x10").error == NumberError::malformed);
  CHECK(parse_integer<int32_t>("").error == NumberError::malformed);
  CHECK(parse_integer<int32_t>("+").error == NumberError::malformed);
  CHECK(parse_integer<int32_t>("1.5").error == NumberError::malformed);
  // One sign at most: Python's int("+-5") and C's strtol both refuse it.
  CHECK(parse_integer<int32_t>("+-5").error == NumberError::malformed);
  CHECK(parse_integer<int32_t>("-+5").error == NumberError::malformed);
  CHECK(parse_integer<int32_t>("++5").error == NumberError::malformed);
  CHECK(parse_integer<size_t>("+-1").error == NumberError::malformed);
  // 2^64 - 1 fits size_t; 2^64 and 10^20 - 1 do not.
  CHECK(parse_integer<uint64_t>("18446744073709551615").value == std::numeric_limits<uint64_t>::max());
  CHECK(parse_integer<uint64_t>("18446744073709551616").error == NumberError::out_of_range);
  CHECK(parse_integer<size_t>("99999999999999999999").error == NumberError::out_of_range);
  CHECK(parse_integer<size_t>("-1").error == NumberError::out_of_range);
  CHECK(parse_integer<size_t>("-x").error == NumberError::malformed);
  CHECK(parse_integer<int64_t>("11", 0, 10).error == NumberError::out_of_range);
  CHECK(parse_integer<int64_t>("10", 0, 10).ok());
}

TEST_CASE("parse_finite and to_integer: no NaN, no infinity, no out-of-range cast", "[util]") {
  CHECK(parse_finite("0.95").value == 0.95);
  CHECK(parse_finite("1e3").value == 1000.0);
  CHECK(parse_finite("-1.5").value == -1.5);
  CHECK(parse_finite("nan").error == NumberError::malformed);
  CHECK(parse_finite("inf").error == NumberError::malformed);
  CHECK(parse_finite("1e400").error == NumberError::out_of_range);  // DBL_MAX is about 1.8e308
  CHECK(parse_finite("1.5x").error == NumberError::malformed);
  CHECK(parse_finite("+-0.5").error == NumberError::malformed);  // Python: float("+-0.5") is a ValueError
  CHECK(parse_finite("+0.5").value == 0.5);
  // int64_t holds [-2^63, 2^63); 2^63 itself is the first double past it.
  CHECK(to_integer<int64_t>(9223372036854775808.0) == std::nullopt);
  CHECK(to_integer<int64_t>(-9223372036854775808.0) == std::numeric_limits<int64_t>::min());
  CHECK(to_integer<int64_t>(9223372036854774784.0) == 9223372036854774784);  // largest double below 2^63
  CHECK(to_integer<uint64_t>(-1.0) == std::nullopt);
  CHECK(to_integer<uint64_t>(18446744073709551616.0) == std::nullopt);  // 2^64
  CHECK(to_integer<int32_t>(1e300) == std::nullopt);
  CHECK(to_integer<int32_t>(std::numeric_limits<double>::quiet_NaN()) == std::nullopt);
  CHECK(to_integer<int32_t>(-2147483648.0) == std::numeric_limits<int32_t>::min());
}
