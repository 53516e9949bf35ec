#pragma once
// Runs benchmarks of one swprofile as one session: fingerprint, then each
// benchmark in its own agent process, samples stored per repeat.
#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/params.h"
#include "plan/plan.h"
#include "store/result_store.h"
#include "sut/connection.h"

namespace kbench::runner {

struct BenchmarkRun {
  std::string name;
  Params params;  // overrides; the agent fills in the rest for the size
  plan::BenchmarkSettings settings;
};

struct SessionRequest {
  std::string swprofile;
  std::string sut_name;  // empty: the SUT's hostname
  std::vector<BenchmarkRun> benchmarks;
  std::optional<int> cpu;  // --cpu: pin every benchmark there
};

struct BenchmarkOutcome {
  std::string benchmark;
  store::Outcome outcome;
  int repeats_stored = 0;
};

struct SessionResult {
  std::int64_t session = 0;
  store::Sut sut;
  std::vector<BenchmarkOutcome> outcomes;
};

// Asks the agent for the fingerprint; throws RunError when it cannot.
nlohmann::json fetch_fingerprint(sut::Connection& connection);
store::Sut sut_from_fingerprint(const nlohmann::json& fingerprint, const std::string& name);

SessionResult run_session(sut::Connection& connection, store::ResultStore& store,
                          const SessionRequest& request, std::ostream& progress);

}  // namespace kbench::runner
