#pragma once
// Runs and kernels of stored sessions: what the run-to-run noise model of
// compare groups by (docs/statistics.md, "Runs").
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/compare.h"
#include "store/result_store.h"

namespace kbench::analysis {

// The run a session belongs to: sessions measured back to back share one.
// `kbench calibrate --spread` pauses between sessions, so each of its sessions
// is a run of its own (plan.block); sessions older than the plan record are
// each their own run.
std::string run_of(std::int64_t session, const nlohmann::json& fingerprint);

// The session's round inside its run: a plan's sessions of one number (one of
// each swprofile, measured one after the other). Empty where the run is not
// a plan's (the session is then a round of its own).
std::string round_of(const nlohmann::json& fingerprint);

// Sessions of one kernel agree on these: release, build, config, command
// line, what the swprofile sets (sysctls, its declared kernel/cmdline), and
// the seccomp filters the agent ran under (they tax every system call).
std::string kernel_of(const nlohmann::json& fingerprint);

// Every session in the store with its run and kernel.
SessionOrigins session_origins(store::ResultStore& store);

}  // namespace kbench::analysis
