#pragma once
// The measurement loop every benchmark runs under in kbench-agent: prepare,
// warmups, repeats, the check of each repeat against the declared result
// classes, notes, and the records that report it all (docs/agent-protocol.md).
// It writes records, not text: the agent's main turns them into JSON Lines.
#include <functional>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "common/records.h"

namespace kbench::bench {

struct RunSettings {
  std::string size = "default";  // "quick" or "default", as written into the benchmark record
  int warmups = 1;
  int repeats = 5;
  Placement where;
  // Sample the kernel during the measured repeats (not the warmups) and end
  // the run with a kernel_profile record: its per-function counts, or why
  // there is none. The timer interrupts of the sampling cost the repeats a
  // little time.
  bool kernel_profile = false;
};

// Receives every record as it is produced; the run waits while it writes.
using RecordWriter = std::function<void(const records::Record&)>;

// Runs `benchmark` (registered as `name`) with complete `params` and returns
// the agent's exit status: 0 ok or skipped, 1 failed, 2 a parameter the
// benchmark rejected mid-run. A bad parameter found before the first record
// (by result_classes() or prepare()) is thrown as InputError with nothing
// written. Every run that gets past that ends with an `end` record.
int run_benchmark(Benchmark& benchmark, const std::string& name, const Params& params, const RunSettings& settings,
                  const RecordWriter& write);

// One repeat's measurements in declared order. Throws RunError naming the
// fault: a declared result class missing or reported twice, an undeclared
// one, a value that is not finite, or a negative time, rate or size.
std::vector<Measurement> checked(const std::vector<Measurement>& measured, const std::vector<ResultClass>& declared);

}  // namespace kbench::bench
