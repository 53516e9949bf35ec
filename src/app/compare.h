#pragma once
// What `kbench compare` computes and prints, for the command line and for
// `kbench serve`, which renders the same report for a browser.
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "report/format_table.h"
#include "store/result_store.h"

namespace kbench::app {

// compare's options as the command line spells them (serve's query
// parameters fill the same fields): parse_compare_request checks them, so a
// bad value is the same one-line InputError everywhere.
struct CompareArguments {
  std::vector<std::string> profiles;  // base first
  std::string format = "grid";
  std::string method = "welch";
  std::string fdr = "0.05";
  // better or raw; empty: better, except that markdown and delta always
  // print the raw change (their seeds' layouts).
  std::string sign;
  std::string min_change = "2";
  store::SampleQuery filter;  // --sut/--benchmark/--resultclass/--class
  std::string sessions = "sessions";
  std::string store_url;  // "": the default store
  std::string looks = "1";
  bool per_sut = false;
  // The shell command that reproduces the report, shown by the html format:
  // the command line as typed (kbench compare). "": equivalent_command of
  // these arguments (kbench serve).
  std::string command;
  // --fail-on: "" (never), regression or change.
  std::string fail_on;
  // --scenario LABEL=BASE:TEST (--format delta, instead of `profiles`): one
  // row per scenario, each BASE against TEST on its own.
  std::vector<std::string> scenarios;
};

// When --fail-on turns marks into exit status kExitGate.
enum class Gate { Never, Regression, Change };

// --scenario LABEL=BASE:TEST taken apart.
struct Scenario {
  std::string label;
  std::string base;
  std::string test;
};

// A comparison to make, every option checked.
struct CompareRequest {
  std::vector<std::string> profiles;  // base first; empty with scenarios
  std::vector<Scenario> scenarios;
  // The test's settings; base and tests are set per comparison.
  analysis::CompareOptions options;
  const report::Format* format = nullptr;  // one of View::Comparison
  store::SampleQuery filter;
  std::string store_url;  // "": the default store
  Gate fail_on = Gate::Never;
  std::string command;  // the shell command that reproduces the report
};

// Checks every argument that needs no store, in the order the command line
// has always reported them. Throws InputError.
CompareRequest parse_compare_request(const CompareArguments& arguments);

// What the gate of --fail-on looks at: the marks of every cell printed.
struct ComparisonMarks {
  int regressions = 0;
  int improvements = 0;
};

// The one rule of compare and serve: a test swprofile that is the base, or
// is given twice, would test samples against themselves. Throws InputError.
void require_distinct_swprofiles(const std::string& base, const std::vector<std::string>& tests);

// The exit status of the gate: kExitGate when it trips, else kExitOk.
int gate_status(Gate gate, const ComparisonMarks& marks);

// A `kbench compare` command line that asks for `arguments`: its profiles and
// every option that differs from the default, quoted for a POSIX shell.
std::string equivalent_command(const CompareArguments& arguments);

// `words` as one POSIX shell command line: a word of only unambiguous
// characters stays as it is, any other is single-quoted ("'perf/*'",
// "'it'\''s'", "''").
std::string shell_command(const std::vector<std::string>& words);

// The report in request.format on `out`; failed benchmarks and incomplete
// sessions on `notes`. Throws InputError for a store without the swprofiles
// or rows asked for. Returns the marks of the report printed, for the gate.
ComparisonMarks write_comparison(const CompareRequest& request, std::ostream& out, std::ostream& notes);

}  // namespace kbench::app
