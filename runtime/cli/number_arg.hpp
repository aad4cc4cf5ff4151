// Integer flags checked on the text the user typed. CLI11 2.1 reads integers with strtoll
// and keeps its saturated result, so "--ctx 99999999999999999999" used to become
// 9223372036854775807 and overflow the arithmetic after it; this validator refuses it
// with the flag's allowed range before any conversion.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <CLI/CLI.hpp>

#include "util/parse_number.hpp"

namespace sy::cli {

/// The most tokens a command generates or a context holds: the largest context.length a
/// pipeline accepts (docs/pipelines.md; the engine indexes positions with int32).
inline constexpr int64_t kMaxTokens = 2147483647;

namespace detail {

template <class T>
CLI::Validator integer_validator(T lo, T hi) {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& s) -> std::string {
        const auto v = util::parse_integer<T>(s, lo, hi);
        // CLI11 converts the text afterwards with strtoll/strtoull in base 0, which would
        // read "010" as 8 and "0x10" as 16: it gets the decimal value that was checked.
        if (v.ok()) {
          s = std::to_string(v.value);
          return {};
        }
        return "must be " + range + ", got '" + s + "'";
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

}  // namespace detail

/// A CLI11 validator accepting decimal integers in [lo, hi]; the message (CLI11 puts the
/// flag name before it) gives the range and what was typed. Add it with ->transform(), not
/// ->check(): check() makes a validator's rewrite of the text (to plain decimal) a no-op.
inline CLI::Validator integer_in(int64_t lo, int64_t hi) { return detail::integer_validator(lo, hi); }

/// The same for uint64_t flags (seeds), whose range goes past int64_t. CLI11 reads those
/// with strtoull, which takes "-1" as 2^64 - 1 and saturates past 2^64; this refuses both.
inline CLI::Validator unsigned_in(uint64_t lo, uint64_t hi) { return detail::integer_validator(lo, hi); }

/// A seed flag: -1 (llama.cpp's spelling of "random", resolved by the command) or a
/// decimal integer in [0, hi].
inline CLI::Validator seed_arg(uint64_t hi) {
  const CLI::Validator range = unsigned_in(0, hi);
  return CLI::Validator(
      [range](std::string& s) -> std::string {
        if (s == "-1") return {};
        const std::string err = range(s);
        return err.empty() ? err : err + " (or -1 for a random seed)";
      },
      "-1 (random) or INT in [0, " + std::to_string(hi) + "]");
}

/// A seed drawn from the system's entropy source, for -1.
inline uint64_t random_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace sy::cli
