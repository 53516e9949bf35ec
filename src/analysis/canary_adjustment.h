#pragma once
// compare --adjust canary: each session's rows divided by the machine's speed
// in that session, as canary/loop measured it (docs/statistics.md, "Adjusting
// by the canary"). The drift between separate runs on a shared host is mostly
// a common speed factor that a register loop follows; rows whose cost scales
// with the core's speed (times and rates) lose it, so the run-to-run noise
// that limits comparisons of separate runs shrinks.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/result_store.h"

namespace kbench::analysis {

enum class Adjustment { None, Canary };

// "none" | "canary"; throws InputError naming --adjust otherwise.
Adjustment parse_adjustment(const std::string& text);

// The benchmark and result class that measure the machine's speed: the
// median block follows the core's clock and leaves out the blocks an
// interrupt or another task cut into, so a kernel that takes more CPU time
// away (more interrupts, a busier kernel thread) is not adjusted away.
inline constexpr std::string_view kCanaryBenchmark = "canary/loop";
inline constexpr std::string_view kCanaryClass = "median (ns)";

// How a row's value moves when the core runs slower: a time grows with the
// time per canary iteration, a rate shrinks with it; other units (percent,
// counts) are left as measured.
enum class SpeedScaling { Time, Rate, None };
SpeedScaling speed_scaling(std::string_view unit);

// Each session's canary: the mean of its canary/loop median repeats.
using SessionCanary = std::map<std::int64_t, double>;
SessionCanary session_canary(store::ResultStore& store);

struct CanaryAdjusted {
  int sessions = 0;        // sessions whose rows were adjusted
  int dropped_sessions = 0;  // sessions of profiles not compared, left out for want of a canary
  std::set<std::string> suts;
};

// Scales every time and rate sample of `samples` (canary/loop's own rows
// excepted) by its session's canary against the geometric mean of its SUT's
// canaries over the sessions in `samples`: a time by mean/session, a rate by
// session/mean, so values stay in the SUT's units near what was measured.
// Sessions of a compared profile without a canary are bad input (InputError
// naming them: their rows cannot be put on the same footing); those of other
// profiles, which only teach the noise model, are left out.
CanaryAdjusted adjust_by_canary(std::vector<store::SampleRow>& samples, const SessionCanary& canary,
                                const std::set<std::string>& compared);

// The line under the table that says what was adjusted.
std::string describe(const CanaryAdjusted& adjusted);

}  // namespace kbench::analysis
