#pragma once
// Environment differences: what the fingerprints of the base and a test
// profile's sessions show as different although the swprofiles do not
// declare it (a THP setting, a governor, a busy machine). Such a difference
// can explain a change as well as the kernel change can, so compare lists it
// under the table (docs/reports.md).
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/report_model.h"
#include "store/result_store.h"

namespace kbench::analysis {

// What a swprofile sets on purpose. Plan swprofiles store it in the session
// fingerprint: "sysctl" (name -> value) and "swprofile" {"kernel", "cmdline"};
// `kbench run` profiles declare nothing.
struct Declarations {
  bool kernel = false;                        // the profile boots its own kernel image
  bool device_tree = false;                   // ... with its own device tree
  std::vector<std::string> cmdline;           // words it adds to the kernel command line
  std::map<std::string, std::string> sysctl;  // e.g. kernel.randomize_va_space -> 0
};

// The union of what the sessions' fingerprints declare.
Declarations declarations_of(const std::vector<nlohmann::json>& fingerprints);

// One side of a comparison: a profile's sessions on one SUT.
struct ProfileSessions {
  std::string name;
  std::vector<nlohmann::json> fingerprints;  // one per session, oldest first
  Declarations declared;
};

// The keys compared: cmdline (the words on one side only), thp, governor,
// smt, mitigations, microcode, clocksource, no_turbo, boost, aslr,
// kernel_release, device_tree_model, and load. A key missing from a
// session's fingerprint (an older kbench did not record it) is unknown and
// not compared; null (the source was unreadable, e.g. no cpufreq) is a
// value. A side's value is the set of values over its sessions. A
// difference is left out when either side declares it: a kernel image
// declares kernel_release (and the BOOT_IMAGE= and initrd= words), a device
// tree (kernel.dtb) device_tree_model, a cmdline word declares itself and
// the keys it sets (mitigations=off declares mitigations, nosmt smt, ...), a
// sysctl the key it sets (kernel.randomize_va_space declares aslr).
// Load: a session is busy when its 1-minute load average at start is at least
// half its CPU count. Only sessions that start a run count (plan session 0,
// or no plan): a later session of the same run starts right after kbench's own
// benchmarks, whose load the 1-minute average still carries. Load is listed
// whenever a side was busy, even when both were: a busy machine's numbers are
// suspect whatever the other side.
// Lines read "thp: base madvise, patched always".
std::vector<std::string> environment_differences(const ProfileSessions& base, const ProfileSessions& test);

// For every table: the base and each test profile's sessions on the table's
// SUT (those that stored samples), their fingerprints from the store, into
// Table::environment_differences. For compare, after build_comparison.
void add_environment_differences(Report& report, store::ResultStore& store);

}  // namespace kbench::analysis
