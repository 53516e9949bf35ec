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
#include <string>
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
