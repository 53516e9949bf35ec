#include "benchmarks/sched_tasks.h"

#include "common/cpu_list.h"
#include "timing/affinity.h"

#include <fcntl.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kbench::bench::tasks {

std::vector<int> online_cpus() { return timing::online_cpus(); }

std::string describe_cpus(const std::vector<int>& cpus) { return format_cpu_list(cpus); }

cpu_set_t cpu_set_of(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  return set;
}

int home_cpu(int requested) {
  if (requested >= 0) return requested;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) return cpu;
    }
  }
  return online_cpus().front();
}

int other_cpu(int cpu) {
  for (int candidate : online_cpus()) {
    if (candidate != cpu) return candidate;
  }
  return -1;
}

bool set_thread_affinity(const cpu_set_t& set) {
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

ScopedAffinity::ScopedAffinity(const std::vector<int>& cpus) {
  if (sched_getaffinity(0, sizeof(saved_), &saved_) != 0) throw_errno("sched_getaffinity");
  const cpu_set_t wanted = cpu_set_of(cpus);
  if (!set_thread_affinity(wanted)) {
    throw_errno("sched_setaffinity to CPUs " + describe_cpus(cpus));
  }
  restore_ = true;
}

ScopedAffinity::~ScopedAffinity() {
  if (restore_) set_thread_affinity(saved_);
}

int Children::wait_all() {
  int failed = 0;
  for (pid_t pid : pids_) {
    int status = 0;
    pid_t got;
    do {
      got = waitpid(pid, &status, 0);
    } while (got < 0 && errno == EINTR);
    if (got != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  pids_.clear();
  return failed;
}

void Children::kill_all() {
  for (pid_t pid : pids_) kill(pid, SIGKILL);
  for (pid_t pid : pids_) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pids_.clear();
}

void Children::throw_fork_error() { throw_errno("fork"); }

void make_pipe(Fd& read_end, Fd& write_end, const char* what) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw_errno(std::string("pipe for ") + what);
  read_end = Fd(fds[0]);
  write_end = Fd(fds[1]);
}

bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void throw_errno(const std::string& what) {
  throw RunError(what + ": " + std::strerror(errno));
}

}  // namespace kbench::bench::tasks
