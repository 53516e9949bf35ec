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
  std::string sign = "better";
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
};

// A `kbench compare` command line that asks for `request`: its profiles and
// every option that differs from the default, quoted for a POSIX shell.
std::string equivalent_command(const CompareRequest& request);

// `words` as one POSIX shell command line: a word of only unambiguous
// characters stays as it is, any other is single-quoted ("'perf/*'",
// "'it'\''s'", "''").
std::string shell_command(const std::vector<std::string>& words);

// The report in request.format on `out`; failed benchmarks and incomplete
// sessions on `notes`. Throws InputError for bad options or a store without
// the rows asked for.
void write_comparison(const CompareRequest& request, std::ostream& out, std::ostream& notes);

// Where `kbench compare` writes its notes: stdout under a table, stderr for
// the formats whose stdout is one document (csv, json, html; the html page
// shows them too).
bool is_machine_format(const std::string& format);

}  // namespace kbench::cli
