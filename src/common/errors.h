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

// The run failed in the lab that carried it (a LAVA device or dispatcher),
// not in the kernel or the benchmark: the kernel may be tried again.
struct InfrastructureError : RunError {
  using RunError::RunError;
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
// An agent run's exit status when the lab that carried it failed it
// (sysexits' EX_TEMPFAIL): InfrastructureError on the controller's side.
constexpr int kExitInfrastructure = 75;

}  // namespace kbench
