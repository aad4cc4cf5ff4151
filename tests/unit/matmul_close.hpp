// How the matmul tests compare a kernel's output with the scalar reference.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

/// |got - ref| within 1e-4 of the largest reference magnitude (the activation conversion is
/// the same on every path; only summation order differs).
inline void check_close(const std::vector<float>& got, const std::vector<float>& ref) {
  double max_err = 0, max_mag = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    max_err = std::max(max_err, static_cast<double>(std::fabs(got[i] - ref[i])));
    max_mag = std::max(max_mag, static_cast<double>(std::fabs(ref[i])));
  }
  CHECK(max_err <= 1e-4 * std::max(1.0, max_mag));
}
