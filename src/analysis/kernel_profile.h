#pragma once
// Where a benchmark's kernel time moved between two swprofiles: the kernel
// profiles (`--kernel-profile`) of its sessions summed per swprofile, and
// each function's share of the samples on both sides. `kbench profile`
// prints every function; compare's report the few that moved the way a
// marked row's change went.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/report_model.h"
#include "store/result_store.h"

namespace kbench::analysis {

// One swprofile's profiles of a benchmark, summed over its sessions.
struct ProfileSum {
  int sessions = 0;  // sessions with a profile (available or not)
  std::uint64_t samples = 0;
  std::uint64_t lost = 0;
  std::uint64_t unresolved = 0;
  std::uint64_t unlisted = 0;
  std::uint64_t period_ns = 0;  // of the first profile
  std::map<std::string, std::uint64_t> functions;
  // The distinct reasons of sessions whose profile was unavailable.
  std::vector<std::string> unavailable;
};

ProfileSum sum_profiles(const std::vector<store::StoredKernelProfile>& profiles);

// Every function sampled on either side, the largest change of share first
// (either direction; equal changes by name).
std::vector<FunctionShift> function_shifts(const ProfileSum& a, const ProfileSum& b);

enum class ShareMove { Gained, Lost };

// At most `top` of `shifts` whose share moved `move`'s way, the largest move
// first (equal moves by name); none when no function did.
std::vector<FunctionShift> top_moves(std::vector<FunctionShift> shifts, ShareMove move, std::size_t top);

// kfunc/'s workload when none is given (benchmarks/kfunc.cpp), and the
// result class a function's timing is judged by.
inline constexpr const char* kKfuncDefaultWorkload = "pingpong";
inline constexpr const char* kKfuncTimePerCall = "time per call (ns)";

// The kfunc/ benchmark that times `function`: kfunc/ takes the bare name
// ("name [module]" is timed as kfunc/name).
std::string kfunc_benchmark(const std::string& function);

// The kfunc/ workload whose loop is `benchmark`'s own path ("getppid" for
// syscall/getppid, "pingpong" for ctxsw/pipe-threads); nullopt when kfunc/
// has none, and its default, the ping-pong, then drives the function only if
// the ping-pong's path reaches it.
std::optional<std::string> kfunc_workload(const std::string& benchmark);

// The commands that time `function`, found in `benchmark`'s profile, with
// kfunc/ driven by `benchmark`'s workload: on `swprofile` (the run), and the
// two swprofiles' timings side by side (the compare).
std::string kfunc_command(const std::string& swprofile, const std::string& function, const std::string& benchmark);
std::string kfunc_compare_command(const std::string& base, const std::string& test, const std::string& function);
// Run on `base`, run on `test`, then compare them: a function's share grows
// in a slower kernel even when its own time did not, so only its time on
// both sides says whether it got slower.
std::vector<std::string> kfunc_commands(const std::string& base, const std::string& test, const std::string& function,
                                        const std::string& benchmark);

// A function a kernel profile points at, to be timed with kfunc/ on both
// sides: its share may have grown only because another function got slower.
struct KfuncCandidate {
  std::string function;   // as profiled ("name [module]" possible)
  std::string benchmark;  // kfunc/<bare name>
  std::string workload;   // kfunc/'s workload: the profiled benchmark's path
  std::string profiled;   // the benchmark whose profile named it
};

// The first `per_shift` functions of every regression's shift in `report`'s
// kernel_time whose benchmark has a kfunc/ workload, each (kfunc benchmark,
// workload) once, in the shifts' order; the profiled benchmarks without a
// workload go to `without_workload`, each once.
std::vector<KfuncCandidate> kfunc_candidates(const Report& report, std::size_t per_shift,
                                             std::vector<std::string>& without_workload);

// When every candidate's own time came out unchanged: per profiled
// benchmark, one line saying so and the commands that look further (the
// profile's longer list between `base` and `test`, kfunc/ under the
// benchmark's workload).
std::vector<std::string> none_slower_lines(const std::vector<KfuncCandidate>& candidates, const std::string& base,
                                           const std::string& test);

// Below this many kernel samples on a side, a function's share is rough. A
// function with share p of n samples has a binomial standard deviation of
// sqrt(p(1-p)/n): at n = 100 and p = 10% that is 3 percentage points, so
// the difference of two sides' shares has a standard deviation of 4.2
// points and a move of 8 points can be chance. From 100 samples on it
// shrinks with sqrt(n) (1 point at 1000), below a change of the size
// worth timing.
inline constexpr std::uint64_t kRoughShareSamples = 100;
bool rough_shares(std::uint64_t samples_a, std::uint64_t samples_b);

// For every cell of the report marked (I) or (R) whose benchmark (with the
// row's parameters) has kernel profiles on both sides among the table's
// machines' sessions: where the time went, into Table::kernel_time. A
// benchmark marked both ways in one column (a regression of one result
// class, an improvement of another) gets both lists. Cells without profiles
// on both sides get nothing. For compare, after build_comparison; with
// `only_sessions`, only those sessions' profiles count (bisect's sandwich:
// the sessions its report was built from).
void add_kernel_time_shifts(Report& report, store::ResultStore& store,
                            const std::optional<std::set<std::int64_t>>& only_sessions = std::nullopt);

}  // namespace kbench::analysis
