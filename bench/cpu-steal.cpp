// cpu-steal PERCENT COMMAND...: runs COMMAND while a real-time thread on
// every CPU it may use takes PERCENT % of each millisecond for itself.
//
// Why: bench/seccomp-tax cannot make a small slowdown on every machine. The
// first argument load in a filter moves every system call off the seccomp
// action cache onto the filter path, and on a VM where a syscall costs ~1 µs
// that step alone is ~10 %. This instrument makes any smaller slowdown: the
// machine loses a fixed share of its time, as it does to a noisy neighbour or
// to a kernel thread that became costlier. A benchmark timing each call sees
// it as a few calls per millisecond that take PERCENT % of a millisecond
// longer, so a mean rises by PERCENT/(100 - PERCENT) and a median does not move.
//
// The threads wake at the same instants on every CPU (absolute deadlines on
// CLOCK_MONOTONIC), so a benchmark spread over several CPUs loses the same
// share as one on a single CPU. They need SCHED_FIFO (root, or CAP_SYS_NICE);
// without it the command is not run. The command's exit status is returned;
// SIGINT and SIGTERM are passed on to it.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr long kPeriodNs = 1'000'000;
long busy_ns = 0;
pid_t child = -1;

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

void* steal(void*) {
  // Deadlines on whole periods, the same on every CPU.
  long long next = (now_ns() / kPeriodNs + 1) * kPeriodNs;
  for (;;) {
    const timespec wake{static_cast<time_t>(next / 1'000'000'000LL), static_cast<long>(next % 1'000'000'000LL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == EINTR) {
    }
    const long long until = now_ns() + busy_ns;
    while (now_ns() < until) {
    }
    next += kPeriodNs;
    // A thread that fell behind (a long preemption by the host) skips the
    // periods it missed instead of stealing them all at once afterwards.
    const long long now = now_ns();
    if (next <= now) next = (now / kPeriodNs + 1) * kPeriodNs;
  }
  return nullptr;
}

void pass_on(int signal) {
  if (child > 0) kill(child, signal);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cpu-steal PERCENT COMMAND [ARGS...]\n");
    return 2;
  }
  char* end = nullptr;
  const double percent = std::strtod(argv[1], &end);
  if (*end != '\0' || end == argv[1] || !(percent > 0.0) || !(percent <= 50.0)) {
    std::fprintf(stderr, "cpu-steal: PERCENT '%s': expected a number above 0 and at most 50\n", argv[1]);
    return 2;
  }
  busy_ns = static_cast<long>(percent / 100.0 * kPeriodNs);

  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    std::fprintf(stderr, "cpu-steal: cannot read the CPUs this process may use: %s\n", std::strerror(errno));
    return 1;
  }
  // Checked before the command starts: a run without the steal must not
  // pass for one with it.
  const sched_param priority{1};
  if (sched_setscheduler(0, SCHED_FIFO, &priority) != 0) {
    std::fprintf(stderr, "cpu-steal: cannot use SCHED_FIFO (needs root or CAP_SYS_NICE): %s\n", std::strerror(errno));
    return 1;
  }
  const sched_param normal{0};
  sched_setscheduler(0, SCHED_OTHER, &normal);

  child = fork();
  if (child < 0) {
    std::fprintf(stderr, "cpu-steal: cannot fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    execvp(argv[2], argv + 2);
    std::fprintf(stderr, "cpu-steal: cannot run %s: %s\n", argv[2], std::strerror(errno));
    _exit(127);
  }
  struct sigaction action{};
  action.sa_handler = pass_on;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_attr_setaffinity_np(&attr, sizeof one, &one);
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    pthread_attr_setschedparam(&attr, &priority);
    pthread_t thread;
    const int failed = pthread_create(&thread, &attr, steal, nullptr);
    pthread_attr_destroy(&attr);
    if (failed != 0) {
      std::fprintf(stderr, "cpu-steal: cannot start the thread for CPU %d: %s\n", cpu, std::strerror(failed));
      kill(child, SIGTERM);
      waitpid(child, nullptr, 0);
      return 1;
    }
  }

  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "cpu-steal: cannot wait for %s: %s\n", argv[2], std::strerror(errno));
      return 1;
    }
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
