// Inputs the fuzz targets (tests/fuzz/) found, kept as plain tests so that the
// ordinary build checks them on every run.
#include <gtest/gtest.h>

#include <string>

#include "common/errors.h"
#include "plan/plan.h"

namespace kbench::plan {
namespace {

// Bad input may only be an InputError naming the file and line: yaml-cpp's
// own "bad conversion" escaped as an internal error (exit 1) before.
void expect_input_error(const std::string& yaml, const std::string& expected_start) {
  try {
    parse_plan(yaml, "fuzz.yaml");
    FAIL() << "accepted:\n" << yaml;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(expected_start, 0), 0u) << e.what();
  } catch (const std::exception& e) {
    FAIL() << "not an InputError: " << e.what() << "\nfor:\n" << yaml;
  }
}

TEST(PlanFuzzFindings, AListAsATopLevelKeyIsBadInput) {
  expect_input_error("[a]: 1\n", "fuzz.yaml:1: plan: expected a plain name as the key");
}

TEST(PlanFuzzFindings, AMappingAsAParamsKeyIsBadInput) {
  expect_input_error("sut: {connection: {params: {{x: y}: 1}}}\n",
                     "fuzz.yaml:1: sut.connection.params: expected a plain name as the key");
}

TEST(PlanFuzzFindings, AListAsASwprofileKeyIsBadInput) {
  expect_input_error("swprofiles:\n  - {name: a, [k]: v}\n", "fuzz.yaml:2: swprofiles[]: expected a plain name");
}

TEST(PlanFuzzFindings, AHugeDurationIsBadInput) {
  expect_input_error("defaults: {benchmark: {timeout: 10999999999999999999999m}}\n",
                     "fuzz.yaml:1: defaults.benchmark.timeout: expected a duration");
  EXPECT_THROW(parse_duration("99999999999999999999999m", "--timeout"), InputError);
  std::string many_parts;  // each part fits, their sum would overflow
  for (int i = 0; i < 3000; ++i) many_parts += "999999999h";
  EXPECT_THROW(parse_duration(many_parts, "--timeout"), InputError);
  EXPECT_EQ(parse_duration("1h30m", "--timeout"), std::chrono::minutes(90));
}

}  // namespace
}  // namespace kbench::plan
