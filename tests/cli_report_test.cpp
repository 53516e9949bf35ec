// The noise and export outputs, rendered by src/report/ since they left the
// cli commands: golden files pin every byte (KBENCH_UPDATE_GOLDEN=1 rewrites
// them). When they were moved, `kbench noise` (grid, csv, json; welch, mwu,
// ci-overlap) and `kbench export` (csv, json) gave byte-identical output
// before and after on a real store.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analysis/noise.h"
#include "common/errors.h"
#include "report/format_table.h"
#include "support/test_files.h"

using kbench::Better;
using kbench::store::SampleRow;
namespace report = kbench::report;
namespace analysis = kbench::analysis;

namespace {

using kbench::testing::read_file;
using kbench::testing::expect_golden;

// One SUT, four sessions of "base": a quiet row, a row whose sessions differ
// (session-noisy), a higher-is-better row with a comma in its name (CSV
// quoting), and a row with one sample per session half (too few to test).
std::vector<SampleRow> samples() {
  std::vector<SampleRow> rows;
  const auto add = [&](const std::string& benchmark, const std::string& name, const std::string& unit, Better better,
                       const std::vector<std::vector<double>>& sessions, kbench::Params params = {}) {
    for (std::size_t s = 0; s < sessions.size(); ++s) {
      for (std::size_t r = 0; r < sessions[s].size(); ++r) {
        SampleRow row;
        row.sut = "lab-1";
        row.swprofile = "base";
        row.session = static_cast<std::int64_t>(10 + s);
        row.session_index = static_cast<int>(s);
        row.benchmark = benchmark;
        row.result_class = {name, unit, better};
        row.repeat = static_cast<int>(r);
        row.value = sessions[s][r];
        row.params = params;
        rows.push_back(row);
      }
    }
  };
  add("syscall/getpid", "mean", "ns", Better::Lower,
      {{100.0, 101.0, 99.5}, {100.5, 99.0, 100.2}, {101.1, 99.9, 100.3}, {100.0, 100.4, 99.8}}, {{"calls", "1000"}});
  add("syscall/getpid", "p99", "ns", Better::Lower,
      {{120.0, 121.0, 119.0}, {140.0, 141.0, 139.5}, {121.0, 120.5, 119.9}, {139.0, 140.2, 141.1}}, {{"calls", "1000"}});
  add("mem/copy", "bandwidth, 4KiB", "bytes/sec", Better::Higher,
      {{1.2e10, 1.21e10}, {1.19e10, 1.2e10}, {1.22e10, 1.18e10}, {1.2e10, 1.205e10}}, {{"size", "4096"}, {"mode", "a\"b"}});
  add("perf/sched", "seconds", "s", Better::Lower, {{2.5}, {2.6}, {2.4}, {2.55}});
  return rows;
}

// Sessions #0-#1 and #2-#3 as two runs of one kernel: the run-to-run noise is
// known. Without origins it is not (the mwu and ci-overlap goldens say so).
analysis::SessionOrigins two_runs() {
  analysis::SessionOrigins origins;
  for (std::int64_t session = 10; session < 14; ++session) {
    origins[session] = {session < 12 ? "run-a" : "run-b", "kernel-1", "", {}, {}};
  }
  return origins;
}

std::string noise(std::string_view format, analysis::TestMethod method, std::optional<double> fdr = 0.05,
                  const std::optional<analysis::SessionOrigins>& origins = std::nullopt) {
  analysis::NoiseOptions options;
  options.profile = "base";
  options.compare.method = method;
  options.compare.fdr = fdr;
  std::ostringstream out;
  report::find_format(format, report::View::Noise).noise(analysis::build_noise_report(samples(), options, origins), out);
  return out.str();
}

std::string exported(const std::string& format, const std::vector<SampleRow>& rows) {
  std::ostringstream out;
  const auto writer = report::find_format(format, report::View::Samples).samples(out);
  writer->begin();
  for (const SampleRow& row : rows) writer->write(row, "uid-" + std::to_string(row.session));
  writer->end();
  return out.str();
}

}  // namespace

TEST(NoiseReport, GridCsvJsonAreGolden) {
  expect_golden("noise-grid.txt", noise("grid", analysis::TestMethod::Welch, 0.05, two_runs()));
  expect_golden("noise.csv", noise("csv", analysis::TestMethod::Welch, 0.05, two_runs()));
  expect_golden("noise.json", noise("json", analysis::TestMethod::Welch, 0.05, two_runs()));
  expect_golden("noise-grid-mwu-fdr-off.txt",
                noise("grid", analysis::TestMethod::MannWhitney, std::nullopt));
  expect_golden("noise-ci-overlap.json", noise("json", analysis::TestMethod::CiOverlap));
}

TEST(SampleExport, CsvAndJsonAreGolden) {
  expect_golden("export.csv", exported("csv", samples()));
  expect_golden("export.json", exported("json", samples()));
}

TEST(SampleExport, NoSamplesIsAHeaderOrAnEmptyArray) {
  EXPECT_EQ(exported("csv", {}),
            "sut,swprofile,session_uid,session_index,benchmark,params,result_class,unit,direction,repeat,value,"
            "sut_class\n");
  EXPECT_EQ(exported("json", {}), "[]\n");
}

TEST(SampleExport, UnknownFormatIsInputErrorAndWritesNothing) {
  std::ostringstream out;
  EXPECT_THROW(report::find_format("xml", report::View::Samples), kbench::InputError);
  EXPECT_TRUE(out.str().empty());
}
