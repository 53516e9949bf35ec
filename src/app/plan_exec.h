#pragma once
// kbench plan check|exec|status: validate, run, or look at a YAML plan; with
// a suts: list, exec runs the fleet (app/fleet.h).
#include <cstddef>
#include <string>
#include <vector>

namespace kbench::app {

// plan's options. --budget and --max-looks stay text: exec checks them
// (with --until-decided) once the plan has been loaded and its SUT
// connected, before the store is opened.
struct PlanRequest {
  std::string path;
  std::vector<std::string> swprofiles;
  bool resume = false;
  std::string cpus;
  bool strict = false;
  std::string store_url;
  bool until_decided = false;
  std::string budget;  // --budget DURATION; empty: no limit
  std::string max_looks = "4";
  std::vector<std::string> suts;  // --sut NAME: only these of the plan's suts
  bool fleet_worker = false;      // one SUT of a suts: plan, started by execute_fleet
  // A crossover's or duet's worker: its meeting place, its place in the pair and the id
  // both sides share (runner/pairing.h); empty dir: not paired.
  std::string pair_dir;
  int pair_position = 0;
  std::string pair_id;
  int duet_half = -1;  // a duet's worker: which half of the CPUs it starts on; -1: none
  std::string build_cache;        // --build-cache DIR for swprofiles with build:
};

// What a plan that passed every check holds.
struct PlanSummary {
  std::size_t suts = 0;  // of a suts: list; 0 for a plan with one sut:
  std::size_t swprofiles = 0;
  std::size_t benchmarks = 0;
  int repeats = 0;  // per swprofile, over all sessions
  // What the services behind the SUTs said (sut::Method::check_online), one
  // line each: what was found, or that a service was not reached.
  std::vector<std::string> notes;
};

// Every check that runs nothing: names, the plan, the SUTs' connection
// parameters, the build specs, the benchmarks; and what a SUT's service
// says of its parameters when it answers (a LAVA server's device types).
// Throws InputError.
PlanSummary check_plan(const PlanRequest& request);

// Builds (or finds) the kernels, measures, prints the session tables, and
// with --until-decided adds sessions. Returns the exit status: 128+N on
// signal N, kExitFailure when a benchmark or a SUT failed, else kExitOk.
int execute_plan_request(const PlanRequest& request);

// Where a plan stands (runner::plan_status_text): sessions, boots, the boot
// in flight.
std::string plan_status(const PlanRequest& request);

}  // namespace kbench::app
