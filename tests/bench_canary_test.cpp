// canary/loop: registered, its parameter checked, its result classes named
// and lower-is-better, and a repeat returns one finite positive value per
// class. No timing asserted: how fast the loop runs is the machine's business.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/harness.h"
#include "common/errors.h"

namespace kb = kbench::bench;
using kbench::Better;
using kbench::InputError;
using kbench::Params;

namespace {

std::unique_ptr<kb::Benchmark> make_canary() {
  auto benchmark = kb::Registry::instance().create("canary/loop");
  EXPECT_NE(benchmark, nullptr) << "canary/loop is not registered";
  return benchmark;
}

std::vector<kb::Measurement> one_repeat(const Params& overrides, int cpu) {
  auto canary = make_canary();
  const Params params = kb::resolve_params(*canary, kb::Size::Quick, overrides);
  kb::Placement where;
  where.cpu = cpu;
  canary->prepare(params, where);
  auto measured = canary->run_repeat(params, where);
  EXPECT_TRUE(canary->notes().count("placement"));
  canary->finish();
  // The harness's own check: exactly the declared classes, finite, not negative.
  return kb::checked(measured, canary->result_classes(params));
}

}  // namespace

TEST(CanaryLoop, IsListedInTheCatalogue) {
  const auto names = kb::Registry::instance().names();
  EXPECT_NE(std::find(names.begin(), names.end(), "canary/loop"), names.end());
}

TEST(CanaryLoop, IterationsIsAPositiveInteger) {
  auto canary = make_canary();
  EXPECT_EQ(kb::resolve_params(*canary, kb::Size::Quick, {}).at("iterations"), "50000000");
  EXPECT_EQ(kb::resolve_params(*canary, kb::Size::Default, {}).at("iterations"), "200000000");
  EXPECT_EQ(kb::resolve_params(*canary, kb::Size::Quick, {{"iterations", "123"}}).at("iterations"), "123");
  for (const char* bad : {"0", "-5", "abc", "1.5", ""}) {
    EXPECT_THROW(kb::resolve_params(*canary, kb::Size::Quick, {{"iterations", bad}}), InputError) << bad;
  }
  EXPECT_THROW(kb::resolve_params(*canary, kb::Size::Quick, {{"loops", "10"}}), InputError);
}

TEST(CanaryLoop, ReportsMeanAndMedianNanosecondsPerIterationLowerIsBetter) {
  auto canary = make_canary();
  const auto classes = canary->result_classes(kb::resolve_params(*canary, kb::Size::Quick, {}));
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0].label(), "mean (ns)");
  EXPECT_EQ(classes[1].label(), "median (ns)");
  for (const auto& rc : classes) EXPECT_EQ(rc.better, Better::Lower) << rc.label();
}

TEST(CanaryLoop, ARepeatGivesFinitePositiveValues) {
  // Several whole blocks and a partial one; then fewer iterations than a block.
  for (const char* iterations : {"250001", "7"}) {
    const auto measured = one_repeat({{"iterations", iterations}}, -1);
    ASSERT_EQ(measured.size(), 2u) << iterations;
    for (const auto& m : measured) {
      EXPECT_TRUE(std::isfinite(m.value)) << iterations << " " << m.result_class.label();
      EXPECT_GT(m.value, 0) << iterations << " " << m.result_class.label();
    }
  }
}

TEST(CanaryLoop, PinsToTheAgentsCpuWhenGivenOne) {
  auto canary = make_canary();
  const Params params = kb::resolve_params(*canary, kb::Size::Quick, {{"iterations", "1000"}});
  kb::Placement where;
  where.cpu = 0;
  canary->prepare(params, where);
  EXPECT_EQ(canary->notes().at("placement"), "cpu0");
  canary->finish();
}
