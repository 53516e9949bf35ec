#pragma once
// One benchmark of one session: an agent process whose samples are stored
// per repeat and whose ending (ok, skipped, failed) is recorded.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/params.h"
#include "common/result_class.h"
#include "plan/plan.h"
#include "runner/progress.h"
#include "store/result_store.h"
#include "sut/connection.h"

namespace kbench::runner {

struct BenchmarkRun {
  std::string name;
  Params params;  // effective parameters (size values with the plan's overrides)
  plan::BenchmarkSettings settings;
  // The catalogue's result classes of the benchmark: what the agent's
  // records are held to (see ExpectedRun). Empty: not checked.
  std::vector<ResultClass> catalogue_classes = {};
};

struct BenchmarkOutcome {
  std::string benchmark;
  store::Outcome outcome;
  int repeats_stored = 0;
};

// Asks the agent for the fingerprint; throws RunError when it cannot.
nlohmann::json fetch_fingerprint(sut::Connection& connection);
store::Sut sut_from_fingerprint(const nlohmann::json& fingerprint, const std::string& name);

// `cpus`: passed to the agent as --cpus (empty: the agent's own placement). Never throws for a misbehaving
// benchmark or agent: a crash, a non-zero exit, a timeout or a broken record stream is a Failed outcome
// with one reason. Throws InputError with the agent's own message when the agent refused its input
// (exit status 2); nothing of that benchmark stays in the store.
BenchmarkOutcome run_benchmark(sut::Connection& connection, store::ResultStore& store, std::int64_t session,
                               const BenchmarkRun& run, const std::string& cpus, Progress& progress);

}  // namespace kbench::runner
