// Paired designs in compare (docs/statistics.md, "Paired designs"): sessions
// of the base and the test measured at the same moment, on two machines of
// one class swapping kernels every slot (crossover) or on two CPU sets of one
// host (duet), tested on their log ratios so that the slot's drift, shared by
// both sides, cancels. The stores are real SQLite stores with the plan's pair
// and unit in each session's fingerprint, read back as kbench compare does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/runs.h"
#include "report/model.h"
#include "store/result_store.h"
#include "support/test_files.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The machine's speed of each slot: every session of the slot, on either
// unit, runs this much slower than at slot 0 (a shared host, a warming room).
const double kSlotDrift[] = {1.0, 1.3, 0.8, 1.15, 0.9, 1.25, 0.85, 1.05};
// What is left between two sessions of one slot: a few tenths of a percent.
const double kBaseNoise[] = {0.002, -0.0015, 0.001, -0.002, 0.0025, -0.001, 0.0005, -0.0015};
const double kTestNoise[] = {-0.001, 0.002, -0.0025, 0.0015, -0.0005, 0.001, -0.002, 0.0015};

struct Slot {
  std::string pair;  // "": a session of no pair (resumed)
  std::string base_sut, base_unit, test_sut, test_unit;
};

class ComparePaired : public ::testing::Test {
 protected:
  std::string url() const { return "sqlite://" + (dir_.path() / "results.db").string(); }

  // One finished session of syscall/getpid, three repeats around `mean`.
  void session(store::ResultStore& store, const std::string& sut, const std::string& sut_class,
               const std::string& profile, int slot, const std::string& pair, const std::string& unit, double mean) {
    store::SessionStart start;
    start.sut = {sut, sut + ".lab", "x86_64", "Test CPU", 4, 8, "Test Board"};
    start.swprofile = profile;
    nlohmann::json plan = {{"run", "paired-run"}, {"session", slot}};
    if (!pair.empty()) {
      plan["pair"] = pair;
      plan["pair_unit"] = unit;
    }
    start.fingerprint = {{"kernel_release", "6.1.0-" + profile}, {"plan", plan}};
    if (!sut_class.empty()) start.fingerprint["sut_class"] = sut_class;
    start.started_at = "2026-12-06T10:00:00Z";
    const store::BenchmarkKey getpid{"syscall/getpid", {}};
    const ResultClass mean_ns{"mean", "ns", Better::Lower};
    const std::int64_t id = store.begin_session(start);
    int repeat = 0;
    for (const double wobble : {-0.0003, 0.0, 0.0003})
      store.add_repeat(id, getpid, repeat++, {records::Sample{"", mean_ns, 0, mean * (1 + wobble)}});
    store.record_outcome(id, getpid, store::Outcome{store::OutcomeStatus::Ok, "", ""});
    store.finish_session(id);
  }

  // Sessions of base and test at each slot's drift; `speed` gives a unit's
  // own slowness, `change` what the test kernel does.
  void measure(const std::vector<Slot>& slots, const std::string& sut_class,
               const std::function<double(const std::string&)>& speed, double change) {
    auto store = store::open_store(url(), store::OpenMode::CreateIfMissing);
    for (std::size_t k = 0; k < slots.size(); ++k) {
      const Slot& slot = slots[k];
      const double drift = 100.0 * kSlotDrift[k % 8];
      session(*store, slot.base_sut, sut_class, "base", static_cast<int>(k), slot.pair, slot.base_unit,
              drift * speed(slot.base_unit) * (1 + kBaseNoise[k % 8]));
      session(*store, slot.test_sut, sut_class, "test", static_cast<int>(k), slot.pair, slot.test_unit,
              drift * speed(slot.test_unit) * (1 + change) * (1 + kTestNoise[k % 8]));
    }
  }

  analysis::Report compare(bool per_sut = false, analysis::TestMethod method = analysis::TestMethod::Welch,
                           bool forget_pairs = false) {
    auto store = store::open_store(url(), store::OpenMode::ReadOnly);
    store::SampleQuery query;
    query.settled_only = true;
    analysis::SessionOrigins origins = analysis::session_origins(*store);
    if (forget_pairs)
      for (auto& [id, origin] : origins) origin.pair.clear();
    analysis::CompareOptions options;
    options.base = "base";
    options.tests = {"test"};
    options.per_sut = per_sut;
    options.method = method;
    return analysis::build_comparison(store->samples(query), options, origins);
  }

  testing::TempDir dir_;
};

std::string render(const analysis::Report& report, const std::string& format) {
  std::ostringstream out;
  report::make_renderer(format)->render(report, out);
  return out.str();
}

const analysis::Cell& only_cell(const analysis::Report& report) {
  EXPECT_EQ(report.tables.size(), 1u);
  return report.tables.at(0).rows.at(0).cells.at(0);
}

// Crossover on machines "a" and "b" of class "lab": the kernels swap
// machines every slot; "b" is 10 % slower than "a" at everything.
std::vector<Slot> crossover(int slots) {
  std::vector<Slot> result;
  for (int k = 0; k < slots; ++k) {
    const bool base_on_a = k % 2 == 0;
    result.push_back({"slot-" + std::to_string(k), base_on_a ? "a" : "b", base_on_a ? "a" : "b",
                      base_on_a ? "b" : "a", base_on_a ? "b" : "a"});
  }
  return result;
}
double machine_speed(const std::string& unit) { return unit == "b" ? 1.10 : 1.0; }

TEST_F(ComparePaired, AnAACrossoverUnderSharedDriftMarksNothingAndIsNarrow) {
  measure(crossover(8), "lab", machine_speed, 0.0);
  {
    // A resumed base session of no pair: left out of the pairs.
    auto store = store::open_store(url(), store::OpenMode::MustExist);
    session(*store, "a", "lab", "base", 8, "", "", 112.0);
  }
  const auto report = compare();
  const auto& cell = only_cell(report);
  EXPECT_EQ(report.tables[0].sut_scope, analysis::SutScope::SutClass);
  EXPECT_EQ(cell.pairs, 8u);
  EXPECT_EQ(cell.machines, 0u) << "pairs replace the test across machines";
  EXPECT_NE(cell.verdict, analysis::Verdict::Regression) << cell.note;
  EXPECT_NE(cell.verdict, analysis::Verdict::Improvement) << cell.note;
  EXPECT_NEAR(cell.change_pct, 0.0, 0.3);
  ASSERT_TRUE(cell.change_ci.valid);
  const double paired_width = cell.change_ci.high - cell.change_ci.low;
  EXPECT_LT(paired_width, 1.0);
  EXPECT_EQ(cell.verdict, analysis::Verdict::Unchanged) << "a CI under 1 % wide lies inside +-2 %";

  // The same sessions without their pairs: the class is tested across its two
  // machines (df 1), whose drift and speed show in the change.
  const auto unpaired = compare(false, analysis::TestMethod::Welch, /*forget_pairs=*/true);
  const auto& across = only_cell(unpaired);
  EXPECT_EQ(across.pairs, 0u);
  ASSERT_TRUE(across.change_ci.valid) << across.note;
  EXPECT_GT(across.change_ci.high - across.change_ci.low, 5 * paired_width);

  const std::string text = render(report, "grid");
  EXPECT_THAT(text, HasSubstr("Paired: 1 cell tested on 8 pairs measured at the same moment"));
  EXPECT_THAT(text, HasSubstr("df = pairs - 2"));
  EXPECT_THAT(text, Not(HasSubstr("Sessions:"))) << "the pairs' line says what the cell was tested on";
  EXPECT_THAT(render(report, "markdown"), HasSubstr("Paired: 1 cell tested on 8 pairs"));
  EXPECT_THAT(render(report, "json"), HasSubstr("\"pairs\": 8"));
}

TEST_F(ComparePaired, ARealChangeUnderTheSameDriftIsMarkedWithItsSize) {
  measure(crossover(8), "lab", machine_speed, 0.08);
  const auto report = compare();
  const auto& cell = only_cell(report);
  EXPECT_EQ(cell.pairs, 8u);
  // getpid's mean is in ns, lower is better: 8 % more is a regression.
  EXPECT_EQ(cell.verdict, analysis::Verdict::Regression) << cell.note;
  EXPECT_NEAR(cell.change_pct, 8.0, 0.08);
  EXPECT_LT(cell.change_ci.low, 8.0);
  EXPECT_GT(cell.change_ci.high, 8.0);
  // Per SUT the pairs are split between the machines: each table is tested
  // as without pairs, and says nothing of them.
  const auto per_sut = compare(/*per_sut=*/true);
  ASSERT_EQ(per_sut.tables.size(), 2u);
  for (const auto& table : per_sut.tables) EXPECT_EQ(table.rows.at(0).cells.at(0).pairs, 0u);
  EXPECT_THAT(render(per_sut, "grid"), Not(HasSubstr("Paired:")));
}

TEST_F(ComparePaired, ADuetOnOneHostIsTestedOnItsPairsPerSut) {
  // Two guests of "host" on CPU sets 0 and 1, swapping every slot; set 1 is
  // 5 % slower.
  std::vector<Slot> slots;
  for (int k = 0; k < 6; ++k) {
    const std::string base_unit = k % 2 == 0 ? "0" : "1", test_unit = k % 2 == 0 ? "1" : "0";
    slots.push_back({"duet-" + std::to_string(k), "host", base_unit, "host", test_unit});
  }
  measure(slots, "", [](const std::string& unit) { return unit == "1" ? 1.05 : 1.0; }, -0.08);
  for (const bool per_sut : {true, false}) {
    const auto report = compare(per_sut);
    const auto& cell = only_cell(report);
    EXPECT_EQ(report.tables[0].sut, "host");
    EXPECT_EQ(cell.pairs, 6u);
    EXPECT_EQ(cell.base_sessions, 6u);
    EXPECT_EQ(cell.verdict, analysis::Verdict::Improvement) << cell.note;
    EXPECT_NEAR(cell.change_pct, -8.0, 0.08);
    EXPECT_THAT(render(report, "grid"), HasSubstr("Paired: 1 cell tested on 6 pairs"));
  }
  // Another method does not apply to pairs, and the legend says so.
  const auto mwu = compare(false, analysis::TestMethod::MannWhitney);
  EXPECT_EQ(only_cell(mwu).verdict, analysis::Verdict::Improvement) << only_cell(mwu).note;
  EXPECT_THAT(render(mwu, "grid"), HasSubstr("--method mwu does not apply to pairs"));
}

TEST_F(ComparePaired, FewerThanThreePairsFallBackAndSayNothingOfPairs) {
  // Two slots paired; a third whose two sessions name one pair but ran on
  // one unit (no pair: nothing cancels between them); two more without a pair.
  auto slots = crossover(5);
  slots[2].test_sut = slots[2].base_sut;
  slots[2].test_unit = slots[2].base_unit;
  for (std::size_t k = 3; k < slots.size(); ++k) slots[k].pair.clear();
  measure(slots, "lab", machine_speed, 0.0);
  const auto report = compare();
  const auto& cell = only_cell(report);
  EXPECT_EQ(cell.pairs, 0u);
  EXPECT_EQ(cell.machines, 2u) << "tested across the class's machines, as without pairs";
  EXPECT_THAT(render(report, "grid"), Not(HasSubstr("Paired")));
  EXPECT_THAT(render(report, "json"), HasSubstr("\"pairs\": 0"));
}

}  // namespace
}  // namespace kbench
