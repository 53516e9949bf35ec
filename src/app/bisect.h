#pragma once
// kbench bisect run|step: find the commit that made a benchmark row worse,
// classifying every commit against the good and bad endpoints' measured
// distributions and measuring more sessions until that is settled
// (src/analysis/bisect.h, docs/bisect.md).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/row_identity.h"
#include "plan/plan.h"
#include "store/result_store.h"
#include "sut/connection.h"

namespace kbench::app {

// bisect's options as the command line spells them.
struct BisectArguments {
  std::string plan_path;
  std::string good;
  std::string bad;
  std::vector<std::string> rows;  // 'BENCH:CLASS'
  std::string sessions = "3";
  std::string max_sessions = "12";
  std::string confirm_sessions = "3";
  std::string confirm_max_sessions;  // "": --confirm-sessions + kMoreConfirmSessions
  std::string time_functions = "3";
  std::string alpha = "0.01";
  std::string store_url;
  std::string build_cache;
  std::string cpus;
  bool strict = false;
};

// --row BENCH:CLASS: the rows of this benchmark and result class, each of
// its parameter sets a row of its own.
struct RowSelector {
  std::string benchmark;
  std::string label;
};

// --confirm-max-sessions by default: --confirm-sessions and this many more,
// so six looks at the default 3.
inline constexpr int kMoreConfirmSessions = 5;

// A bisection to run, every argument checked: the plan loaded, the commits
// resolved in its build source.
struct BisectRequest {
  std::string plan_path;
  plan::Plan plan;
  std::string source;  // the git tree of the plan's one swprofile's build:
  std::string good;    // as given (a revision), for the log
  std::string bad;
  std::string good_sha;
  std::string bad_sha;
  std::vector<RowSelector> rows;  // empty: the rows compare marks (R) between the endpoints
  int first_sessions = 3;
  int max_sessions = 12;
  // Sessions of the culprit in the A/B/A sandwich (its parent gets one
  // more); 0: no sandwich, the culprit reported as unconfirmed.
  int confirm_sessions = 3;
  // Sessions of the culprit at most: while its rows are only undecided, the
  // sandwich grows by one session a side (C then P) up to this many.
  int confirm_max_sessions = 8;
  // Of a confirmed culprit with kernel profiles: the functions of each
  // regression row's profile timed with kfunc/ on both sides, the most
  // share gained first; 0: none timed.
  int time_functions = 3;
  double alpha = 0.01;
  std::string store_url;  // "": the default store
  std::string build_cache;
  std::string cpus;
  bool strict = false;
};

// Checks in the order the command has always reported them (the plan, its
// build source, the numbers, --row, the commits). Throws InputError.
BisectRequest parse_bisect_request(const BisectArguments& arguments);

// The means of each session of `sessions`, per row: a benchmark's parameter
// sets are rows of their own, never pooled.
std::map<analysis::RowIdentity, std::vector<double>> session_means_by_row(const std::vector<store::SampleRow>& samples,
                                                                          const std::set<std::int64_t>& sessions);

// The rows of `measured` that `selectors` pick: the selectors' order, and
// each one's parameter sets in row order. A selector matching none stays as
// a row without parameters (reported as not measured on both endpoints).
std::vector<analysis::RowIdentity> select_rows(const std::vector<RowSelector>& selectors,
                                               const std::map<analysis::RowIdentity, std::vector<double>>& measured);

// How a bisect reaches the plan's SUT, as plan::connect: one connection
// for every commit, or one per commit's swprofile when the SUT boots
// kernels. Tests pass connections of their own.
using ConnectSut = std::function<std::unique_ptr<sut::Connection>(const plan::SutSpec&, const plan::SwprofileSpec*)>;

class Bisector {
 public:
  // Connects to the plan's SUT and opens (creates) the store.
  explicit Bisector(const BisectRequest& request, ConnectSut connect = plan::connect);
  ~Bisector();
  Bisector(const Bisector&) = delete;
  Bisector& operator=(const Bisector&) = delete;

  // kbench bisect run: measure both endpoints, check they differ, drive git
  // bisect in a worktree kbench owns, then confirm the first bad commit git
  // names with an A/B/A sandwich against its parent. Returns the exit status:
  // kExitOk when the culprit is confirmed (or --confirm-sessions 0 skipped
  // the sandwich), kExitFailure when it is not confirmed, the endpoints do
  // not differ or only skipped commits are left.
  int run();

  // kbench bisect step: classify HEAD of the source tree, for git bisect
  // run. Returns 0 good, 1 bad, 125 skip, 128 when the endpoints do not differ.
  int step();

 private:
  class Search;
  std::unique_ptr<Search> search_;
};

}  // namespace kbench::app
