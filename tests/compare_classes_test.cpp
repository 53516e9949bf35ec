// SUT classes in compare: one table per class as the seed report prints it,
// the class's machines pooled with the machine as a level of variation,
// --class / --sut / --per-sut, and a class of one machine reading exactly
// like that machine's table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "analysis/compare.h"
#include "analysis/noise.h"
#include "report/model.h"
#include "store/result_store.h"
#include "support/test_files.h"
#include "support/test_paths.h"

using namespace kbench;
using kbench::testing::expect_golden;
using kbench::testing::read_file;
using kbench::testing::TempDir;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

namespace {

struct Machine {
  std::string sut;
  std::string sut_class;
  double level;           // the machine's own speed: machines differ
  double patched_factor;  // what the patch does on this machine
};

// Three sessions a side, five repeats a session; sessions differ by a little,
// repeats by less, as on a quiet machine.
std::vector<store::SampleRow> samples_of(const std::vector<Machine>& machines) {
  std::vector<store::SampleRow> rows;
  std::int64_t session = 0;
  const double session_offsets[] = {0.0, 0.004, -0.003};
  const double repeat_offsets[] = {0.0, 0.001, -0.001, 0.0005, -0.0005};
  for (const auto& machine : machines) {
    for (const std::string profile : {"base", "patched"}) {
      for (int s = 0; s < 3; ++s) {
        ++session;
        for (const auto& [benchmark, rc, scale] :
             {std::tuple{"syscall/getpid", ResultClass{"mean", "ns", Better::Lower}, 1.0},
              std::tuple{"micromm/munmap", ResultClass{"munmap", "seconds", Better::Lower}, 0.0006}}) {
          for (int r = 0; r < 5; ++r) {
            store::SampleRow row;
            row.sut = machine.sut;
            row.sut_class = machine.sut_class;
            row.swprofile = profile;
            row.session = session;
            row.session_index = s;
            row.benchmark = benchmark;
            row.result_class = rc;
            row.repeat = r;
            const double factor = profile == "patched" ? machine.patched_factor : 1.0;
            row.value = machine.level * scale * factor * (1 + session_offsets[s]) * (1 + repeat_offsets[r]);
            rows.push_back(row);
          }
        }
      }
    }
  }
  return rows;
}

analysis::CompareOptions options(bool per_sut = false) {
  analysis::CompareOptions compare;
  compare.base = "base";
  compare.tests = {"patched"};
  compare.per_sut = per_sut;
  return compare;
}

std::string grid(const analysis::Report& report) {
  std::ostringstream out;
  report::make_renderer("grid")->render(report, out);
  return out.str();
}

const analysis::Cell& cell_of(const analysis::Table& table, const std::string& benchmark) {
  for (const auto& row : table.rows) {
    if (row.benchmark == benchmark) return row.cells.at(0);
  }
  throw std::runtime_error("no row " + benchmark);
}

}  // namespace

TEST(CompareClasses, SeedStyleTablePerClassFromTwoMachinesOfTwoClasses) {
  const auto samples = samples_of({{"m7g-1", "aws-m7g.metal", 100, 1.10}, {"ampere-1", "ampereone-192c", 140, 1.0}});
  const auto report = analysis::build_comparison(samples, options());
  ASSERT_EQ(report.tables.size(), 2u);
  EXPECT_EQ(report.tables[0].sut, "ampereone-192c");
  EXPECT_EQ(report.tables[0].sut_scope, analysis::SutScope::SutClass);
  EXPECT_EQ(report.tables[0].suts, std::vector<std::string>{"ampere-1"});
  const std::string text = grid(report);
  EXPECT_THAT(text, HasSubstr("Results for SUT Class aws-m7g.metal:\n"));
  EXPECT_THAT(text, HasSubstr("Results for SUT Class ampereone-192c:\n"));
  expect_golden("grid-classes.txt", text);
  for (const std::string format : {"csv", "json", "markdown", "mail"}) {
    std::ostringstream out;
    report::make_renderer(format)->render(report, out);
    EXPECT_THAT(out.str(), HasSubstr("aws-m7g.metal")) << format << " carries the class";
  }
}

TEST(CompareClasses, AClassOfOneMachineReadsLikeItsTableButForTheHeading) {
  const auto samples = samples_of({{"m7g-1", "aws-m7g.metal", 100, 1.10}});
  std::string by_class = grid(analysis::build_comparison(samples, options()));
  std::string by_sut = grid(analysis::build_comparison(samples, options(/*per_sut=*/true)));
  ASSERT_EQ(by_class.rfind("Results for SUT Class aws-m7g.metal:\n", 0), 0u) << by_class;
  ASSERT_EQ(by_sut.rfind("Results for SUT m7g-1:\n", 0), 0u) << by_sut;
  by_class.erase(0, by_class.find('\n'));
  by_sut.erase(0, by_sut.find('\n'));
  // The summary under the table names the table (seed: "aws-m7g.metal:").
  const auto summary = [](std::string text, const std::string& name) {
    const auto at = text.rfind("\n" + name + ":\n");
    if (at != std::string::npos) text.replace(at + 1, name.size(), "NAME");
    return text;
  };
  EXPECT_EQ(summary(by_class, "aws-m7g.metal"), summary(by_sut, "m7g-1"));

  // Sessions that name no class: tables per SUT exactly as before classes.
  auto unclassed = samples;
  for (auto& row : unclassed) row.sut_class.clear();
  EXPECT_EQ(grid(analysis::build_comparison(unclassed, options())),
            grid(analysis::build_comparison(unclassed, options(/*per_sut=*/true))));
}

TEST(CompareClasses, AChangeOnlyOneMachineShowsIsNotMarkedOnTheClassTable) {
  const auto samples = samples_of({{"a", "c", 100, 1.10}, {"b", "c", 130, 1.0}});
  const auto per_sut = analysis::build_comparison(samples, options(/*per_sut=*/true));
  ASSERT_EQ(per_sut.tables.size(), 2u);
  EXPECT_EQ(cell_of(per_sut.tables[0], "syscall/getpid").verdict, analysis::Verdict::Regression)
      << "machine a alone: a clear 10% regression";
  const auto by_class = analysis::build_comparison(samples, options());
  ASSERT_EQ(by_class.tables.size(), 1u);
  EXPECT_EQ(by_class.tables[0].suts, (std::vector<std::string>{"a", "b"}));
  const auto& cell = cell_of(by_class.tables[0], "syscall/getpid");
  EXPECT_EQ(cell.machines, 2u);
  EXPECT_NEAR(cell.change_pct, (std::sqrt(1.10) - 1) * 100, 1e-6) << "the geometric mean of the machines' changes";
  EXPECT_NE(cell.verdict, analysis::Verdict::Regression) << "machine b does not show it: machine-to-machine variation";
  EXPECT_NE(cell.verdict, analysis::Verdict::Improvement);
  EXPECT_GT(cell.p_value, 0.05);
  EXPECT_THAT(grid(by_class), HasSubstr("Machines: 2 cells tested across the class's machines (2 machines)"));
}

TEST(CompareClasses, AChangeEveryMachineShowsIsMarkedOnTheClassTable) {
  const auto samples = samples_of({{"a", "c", 100, 1.10}, {"b", "c", 130, 1.101}, {"d", "c", 90, 1.099}});
  const auto by_class = analysis::build_comparison(samples, options());
  ASSERT_EQ(by_class.tables.size(), 1u);
  const auto& cell = cell_of(by_class.tables[0], "syscall/getpid");
  EXPECT_EQ(cell.machines, 3u);
  EXPECT_EQ(cell.verdict, analysis::Verdict::Regression);
  EXPECT_LT(cell.change_ci.low, 10.0);
  EXPECT_GT(cell.change_ci.high, 10.0);
  // The base column pools the machines' repeats; sessions are not what the class row was tested on.
  EXPECT_EQ(by_class.tables[0].rows[1].base.count, 45u);
  EXPECT_EQ(cell.base_sessions, 0u);
}

TEST(CompareClasses, TheNoiseReportStaysPerMachineForClassedSessions) {
  // base: 6 sessions a machine, so its halves are an A/A comparison per machine.
  auto samples = samples_of({{"a", "c", 100, 1.0}, {"b", "c", 130, 1.0}});
  std::vector<store::SampleRow> base;
  for (int copy = 0; copy < 2; ++copy) {
    for (auto row : samples) {
      if (row.swprofile != "base") continue;
      row.session += 100 * copy;
      row.session_index += 3 * copy;
      base.push_back(row);
    }
  }
  analysis::NoiseOptions noise;
  noise.profile = "base";
  const auto report = analysis::build_noise_report(base, noise);
  ASSERT_EQ(report.tables.size(), 2u);
  for (const auto& table : report.tables) {
    EXPECT_TRUE(table.aa_done) << table.sut;
    ASSERT_FALSE(table.rows.empty());
    EXPECT_TRUE(table.rows[0].aa.present) << table.sut << ": the A/A cell of its own table";
  }
}

// --- the command line ---------------------------------------------------------------

namespace {

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
};

Ran kbench_cli(const fs::path& dir, const std::string& arguments) {
  const std::string command = std::string(KBENCH_BINARY_DIR) + "/kbench " + arguments + " >" +
                              (dir / "stdout").string() + " 2>" + (dir / "stderr").string();
  const int raw = std::system(command.c_str());
  return Ran{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(dir / "stdout"), read_file(dir / "stderr")};
}

// The samples above, stored as sessions of one run per SUT (so the sides share runs).
void store_samples(const fs::path& file, const std::vector<store::SampleRow>& samples) {
  auto store = store::open_store(file.string(), store::OpenMode::CreateIfMissing);
  std::int64_t current = -1, id = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto& row = samples[i];
    if (row.session != current) {
      current = row.session;
      store::SessionStart start;
      start.sut = store::Sut{row.sut, row.sut, "aarch64", "cpu", 4, 8, ""};
      start.swprofile = row.swprofile;
      start.fingerprint = {{"sut_class", row.sut_class}, {"plan", {{"run", "run-" + row.sut}}}};
      id = store->begin_session(start);
    }
    store->add_repeat(id, {row.benchmark, {}}, row.repeat, {{row.benchmark, row.result_class, 0, row.value}});
    const bool last_of_benchmark = i + 1 == samples.size() || samples[i + 1].session != row.session ||
                                   samples[i + 1].benchmark != row.benchmark;
    if (last_of_benchmark) store->record_outcome(id, {row.benchmark, {}}, store::Outcome{});
  }
}

}  // namespace

TEST(CompareClasses, ClassSutAndPerSutSelectTablesAndABadClassIsOneLine) {
  TempDir dir;
  const fs::path file = dir.path() / "s.db";
  store_samples(file, samples_of({{"m7g-1", "aws-m7g.metal", 100, 1.10},
                                  {"m7g-2", "aws-m7g.metal", 104, 1.0},
                                  {"ampere-1", "ampereone-192c", 140, 1.0}}));
  const std::string store = " --store " + file.string();
  Ran ran = kbench_cli(dir.path(), "compare base patched" + store);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("Results for SUT Class ampereone-192c:\n"));
  EXPECT_THAT(ran.out, HasSubstr("Results for SUT Class aws-m7g.metal:\n"));
  EXPECT_THAT(ran.out, ::testing::Not(HasSubstr("Results for SUT m7g-1")));

  ran = kbench_cli(dir.path(), "compare base patched --class 'aws-*'" + store);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("Results for SUT Class aws-m7g.metal:\n"));
  EXPECT_THAT(ran.out, ::testing::Not(HasSubstr("ampereone")));

  ran = kbench_cli(dir.path(), "compare base patched --class 'aws-*' --sut m7g-1" + store);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("Results for SUT Class aws-m7g.metal:\n"));
  EXPECT_THAT(ran.out, ::testing::Not(HasSubstr("Machines:"))) << "one machine selected: its own test";

  ran = kbench_cli(dir.path(), "compare base patched --per-sut --format csv" + store);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("\nm7g-2,base,patched,"));
  EXPECT_THAT(ran.out, HasSubstr(",aws-m7g.metal,m7g-2,0,0\n"));

  ran = kbench_cli(dir.path(), "compare base patched --class 'graviton*'" + store);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(ran.err, "kbench: --class graviton*: matches no SUT class in " + file.string() +
                         " (known: ampereone-192c, aws-m7g.metal)\n");
}

TEST(CompareClasses, TheMachinesLineCountsOnlyClassRowsTheMethodTested) {
  const auto samples = samples_of({{"a", "c", 100, 1.10}, {"b", "c", 130, 1.101}, {"d", "c", 90, 1.099}});
  auto welch = options();
  EXPECT_THAT(grid(analysis::build_comparison(samples, welch)),
              HasSubstr("Machines: 2 cells tested across the class's machines (3 machines)"));
  // mwu and ci-overlap leave class rows of several machines untested, with a
  // note: the legend must not count them as tested.
  for (const auto method : {analysis::TestMethod::MannWhitney, analysis::TestMethod::CiOverlap}) {
    auto other = options();
    other.method = method;
    const auto report = analysis::build_comparison(samples, other);
    const auto& cell = cell_of(report.tables.at(0), "syscall/getpid");
    EXPECT_THAT(cell.note, HasSubstr("several machines"));
    EXPECT_THAT(grid(report), ::testing::Not(HasSubstr("Machines:")));
  }
}
