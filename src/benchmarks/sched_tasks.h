#pragma once
// Plumbing shared by the scheduler-facing families (perf/sched, perf/futex,
// ctxsw, mmtests/hackbench): which CPUs exist, pinning with restore, and
// forked children that cannot outlive the agent (PR_SET_PDEATHSIG) and are
// killed and reaped on every error path.
#include <sched.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "common/errors.h"

namespace kbench::bench::tasks {

// CPUs online, ascending (/sys/devices/system/cpu/online; 0..N-1 as fallback).
std::vector<int> online_cpus();
// "0-3", "0,2,5-7".
std::string describe_cpus(const std::vector<int>& cpus);
cpu_set_t cpu_set_of(const std::vector<int>& cpus);

// The CPU a same-CPU pair runs on: `requested` (the agent's --cpu) when set,
// else the first CPU the calling thread may use.
int home_cpu(int requested);
// An online CPU other than `cpu`, or -1 when there is none.
int other_cpu(int cpu);

// Sets the calling thread's affinity; returns false when the kernel refuses.
bool set_thread_affinity(const cpu_set_t& set);

// Changes the calling thread's affinity for a scope and restores it after,
// so a benchmark does not leave the agent pinned where it was not asked to.
class ScopedAffinity {
 public:
  explicit ScopedAffinity(const std::vector<int>& cpus);
  ~ScopedAffinity();
  ScopedAffinity(const ScopedAffinity&) = delete;
  ScopedAffinity& operator=(const ScopedAffinity&) = delete;

 private:
  cpu_set_t saved_{};
  bool restore_ = false;
};

// Forked children that are SIGKILLed and reaped when the set is destroyed
// before wait_all() collected them: no error path leaves a process behind.
class Children {
 public:
  Children() = default;
  ~Children() { kill_all(); }
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;

  // fork()s a child that dies with the forking thread's process and runs
  // `body` (async-signal-safe calls only: the parent may have threads), then
  // _exit()s with its return value. Throws RunError when fork fails.
  template <class Body>
  pid_t spawn(Body&& body) {
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw_fork_error();
    if (pid == 0) {
      // The parent may have died between fork() and prctl(): check after.
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(125);
      _exit(body());
    }
    pids_.push_back(pid);
    return pid;
  }

  // Reaps every child; returns how many did not exit with status 0.
  int wait_all();
  void kill_all();
  std::size_t size() const { return pids_.size(); }

 private:
  [[noreturn]] static void throw_fork_error();
  std::vector<pid_t> pids_;
};

// A file descriptor closed on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// pipe2(O_CLOEXEC) as {read end, write end}; throws RunError naming `what`.
void make_pipe(Fd& read_end, Fd& write_end, const char* what);

// Loops over short writes/reads and EINTR; false on error or (read) EOF.
bool write_all(int fd, const void* data, std::size_t size);
bool read_all(int fd, void* data, std::size_t size);

// "<what>: <strerror(errno)>" as a RunError.
[[noreturn]] void throw_errno(const std::string& what);

}  // namespace kbench::bench::tasks
