#pragma once
// Keeps every task a benchmark starts inside the agent's reach, also tasks
// that leave its process group (setsid, setpgid), so that when the benchmark
// ends, fails or is stopped nothing it started survives it.
//
// The agent process becomes a supervisor: a child subreaper that runs the
// benchmark in a forked worker. Where a cgroup v2 hierarchy is writable the
// worker is moved into a fresh cgroup (kbench-agent-<pid>, under the agent's
// own cgroup) and the whole cgroup is killed with cgroup.kill; otherwise the
// supervisor kills every process descending from it (orphans reparent to it
// as the subreaper). SIGTERM, SIGINT and SIGHUP to the supervisor do the same
// before it exits. KBENCH_CONTAINMENT=subreaper forces the fallback.
#include <functional>
#include <string>

namespace kbench::agent {

// Runs `body` in a contained worker and returns its exit status; in the
// worker itself this returns body()'s result (exceptions propagate there).
// A worker killed by a signal makes the supervisor die by the same signal.
int run_contained(const std::function<int()>& body);

// The method run_contained would use here, for the fingerprint, e.g.
// "cgroup2 /sys/fs/cgroup/unified" or "subreaper (no cgroup2 mount)".
std::string containment_method();

}  // namespace kbench::agent
