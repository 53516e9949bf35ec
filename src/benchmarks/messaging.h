#pragma once
// The hackbench / `perf bench sched messaging` engine, shared by perf/sched
// (messaging) and mmtests/hackbench.
//
// Each group has `fds` receivers and `fds` senders. Receiver r owns one
// channel (an AF_UNIX stream socketpair, or a pipe); every sender of the group
// writes `loops` messages of `message_bytes` to every receiver of the group,
// and every receiver reads fds * loops messages. All tasks are created first
// and wait; the clock runs from releasing them until the last one finished
// (processes reaped, threads joined), as perf and hackbench time it.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kbench::bench {

struct MessagingSpec {
  int groups = 10;
  int fds = 20;
  int loops = 100;
  int message_bytes = 100;
  bool threads = false;  // pthreads in the agent instead of forked processes
  bool pipes = false;    // pipes instead of socketpairs
  std::vector<int> cpus;  // every task may run on any of these (empty: inherit)
  // Process mode: memory the parent maps and writes before forking, so that
  // every task carries it (copy-on-write faults, page-table teardown at exit,
  // both inside the clock). perf's tasks are forks of the perf binary, whose
  // footprint makes perf's process-mode time ~1.3x that of a small forker:
  // docs/benchmarks/sched.md "Relation to perf".
  long ballast_anon_bytes = 0;  // anonymous memory, every page written
  int ballast_mappings = 0;     // extra small mappings (each split into two VMAs)
};

// The footprint of a task forked from Debian's perf 6.1 (measured from
// /proc/PID/smaps_rollup of a `perf bench sched messaging` task: 2.4 MB
// anonymous, 174 mappings), as the ballast that reproduced perf's time in
// bench/experiments/messaging-footprint.c.
constexpr long kPerfBallastAnonBytes = 3L << 20;
constexpr int kPerfBallastMappings = 160;

// Memory mapped and written on construction, unmapped on destruction; what
// is mapped while forking is inherited by every forked task. Each of the
// `mappings` regions is two pages with different protections (two VMAs that
// the kernel cannot merge with their neighbours). Throws RunError when mmap fails.
class ForkBallast {
 public:
  ForkBallast(long anon_bytes, int mappings);
  ~ForkBallast();
  ForkBallast(const ForkBallast&) = delete;
  ForkBallast& operator=(const ForkBallast&) = delete;

 private:
  void map(std::size_t bytes, bool split);
  void release();
  std::vector<std::pair<void*, std::size_t>> regions_;
};

// Throws InputError for values out of range (naming `param_prefix`+field).
void validate_messaging(const MessagingSpec& spec, const std::string& what);

// Thread mode keeps every channel in one process: raises the soft
// RLIMIT_NOFILE as far as needed, or throws SkipBenchmark when the hard limit
// is too low.
void ensure_messaging_fd_budget(const MessagingSpec& spec);

// Seconds from release to the last task done. Throws RunError when a task
// fails; every task is gone when it returns or throws.
double run_messaging(const MessagingSpec& spec);

// "process/sockets", "thread/pipes": for notes.
std::string describe_messaging(const MessagingSpec& spec);

}  // namespace kbench::bench
