#pragma once
#include <stdexcept>
#include <string>

namespace kbench {

// Bad input from the user (arguments, files, store contents). Reported as one
// line naming the input and what was expected; exit status 2; nothing written.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Something that should have worked did not (a benchmark crashed, a system
// call failed). Exit status 1.
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A benchmark cannot run on this machine (missing module, tool, privilege).
// Never a failure of the run: it is reported as `skipped: <reason>`.
struct SkipBenchmark : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
// `kbench compare --fail-on`: the table was printed and holds a mark the CI
// gate was told to fail on (a regression, or any change).
constexpr int kExitGate = 3;

}  // namespace kbench
