#pragma once
// What `kbench compare` computes and prints, callable without the command
// line: `kbench serve` renders the same report for a browser.
#include <iosfwd>
#include <string>
#include <vector>

#include "store/result_store.h"

namespace kbench::cli {

// compare's options as the command line spells them; validated by
// write_comparison, so a bad value is the same one-line InputError everywhere.
struct CompareRequest {
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
  // the command line as typed (kbench compare). "": write_comparison shows
  // equivalent_command(request) instead (kbench serve).
  std::string command;
  // --fail-on: "" (never), regression or change; write_comparison checks the
  // word, the command turns the marks it counted into exit status 3.
  std::string fail_on;
  // --scenario LABEL=BASE:TEST (--format delta, instead of `profiles`): one
  // row per scenario, each BASE against TEST on its own.
  std::vector<std::string> scenarios;
};

// What the gate of --fail-on looks at: the marks of every cell printed.
struct ComparisonMarks {
  int regressions = 0;
  int improvements = 0;
};

// The one rule of compare and serve: a test swprofile that is the base, or
// is given twice, would test samples against themselves. Throws InputError.
void require_distinct_swprofiles(const std::string& base, const std::vector<std::string>& tests);

// The exit status --fail-on asks for (kExitGate when it trips, else kExitOk).
// Throws InputError for a word other than "", regression and change.
int gate_status(const std::string& fail_on, const ComparisonMarks& marks);

// A `kbench compare` command line that asks for `request`: its profiles and
// every option that differs from the default, quoted for a POSIX shell.
std::string equivalent_command(const CompareRequest& request);

// `words` as one POSIX shell command line: a word of only unambiguous
// characters stays as it is, any other is single-quoted ("'perf/*'",
// "'it'\''s'", "''").
std::string shell_command(const std::vector<std::string>& words);

// The report in request.format on `out`; failed benchmarks and incomplete
// sessions on `notes`. Throws InputError for bad options (--fail-on too,
// before anything is printed) or a store without the rows asked for.
// Returns the marks of the report printed, for the gate.
ComparisonMarks write_comparison(const CompareRequest& request, std::ostream& out, std::ostream& notes);

}  // namespace kbench::cli
