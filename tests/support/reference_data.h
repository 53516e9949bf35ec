#pragma once
// Reading the scipy/numpy reference values in tests/data/ and comparing
// against them, shared by the tests of src/stats.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>
#include "support/test_paths.h"

namespace kbench::test {

inline constexpr double kReferenceTolerance = 1e-9;

// tests/data/<file>, parsed; throws when it cannot be read.
inline nlohmann::json load_reference(const std::string& file) {
  const std::string path = std::string(KBENCH_TEST_DATA_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

// The generators write NaN as null and infinities as "inf" / "-inf".
inline double reference_number(const nlohmann::json& v) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (v.is_string()) {
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("unexpected string in reference data: " + v.dump());
  }
  return v.get<double>();
}

inline std::vector<double> reference_numbers(const nlohmann::json& v) {
  std::vector<double> out;
  for (const auto& x : v) out.push_back(reference_number(x));
  return out;
}

// Relative error <= kReferenceTolerance; NaN must meet NaN, infinity the same
// infinity, and an expected 0 needs an absolute error <= 1e-300 (exact 0).
inline ::testing::AssertionResult close_to_reference(const char* actual_expr, const char* expected_expr,
                                                     double actual, double expected) {
  const bool ok = [&] {
    if (std::isnan(expected)) return std::isnan(actual);
    if (std::isinf(expected)) return actual == expected;
    if (expected == 0) return actual == 0 || std::fabs(actual) < 1e-300;
    return std::fabs(actual - expected) <= kReferenceTolerance * std::fabs(expected);
  }();
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << actual_expr << " = " << std::setprecision(17) << actual
                                       << ", reference " << expected_expr << " = " << expected
                                       << " (relative error " << std::fabs(actual - expected) / std::fabs(expected)
                                       << ")";
}

}  // namespace kbench::test

#define EXPECT_REF(actual, expected) EXPECT_PRED_FORMAT2(::kbench::test::close_to_reference, actual, expected)
