#include "agent/containment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "common/errors.h"
#include "tracing/tracefs.h"

namespace kbench::agent {

namespace {

constexpr const char* kPrefix = "kbench-agent-";

// KBENCH_CONTAINMENT: unset or "auto" tries a cgroup first; "subreaper"
// forces the fallback (the tests use it to prove the fallback alone works).
bool fallback_forced() {
  const char* value = std::getenv("KBENCH_CONTAINMENT");
  if (!value || !*value || std::strcmp(value, "auto") == 0) return false;
  if (std::strcmp(value, "subreaper") == 0) return true;
  throw InputError(std::string("KBENCH_CONTAINMENT=") + value + ": expected auto or subreaper");
}

// Mount points in mountinfo write space, tab, newline and \ as \ooo.
std::string unescape_mountinfo(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      out += static_cast<char>(std::strtol(text.substr(i + 1, 3).c_str(), nullptr, 8));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The directory of this process's own cgroup v2, found through
// /proc/self/mountinfo (hybrid systems mount it at /sys/fs/cgroup/unified,
// pure ones at /sys/fs/cgroup). Empty with `why` set when there is none.
std::string own_cgroup_dir(std::string& why) {
  std::string mount_point;
  std::string mount_root;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    const auto separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream tail(line.substr(separator + 3));
    std::string fstype;
    tail >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream head(line.substr(0, separator));
    std::string id, parent, device, root, point;
    head >> id >> parent >> device >> root >> point;
    mount_root = unescape_mountinfo(root);
    mount_point = unescape_mountinfo(point);
    break;
  }
  if (mount_point.empty()) {
    why = "no cgroup2 mount";
    return "";
  }
  std::ifstream cgroup("/proc/self/cgroup");
  std::string path;
  for (std::string line; std::getline(cgroup, line);) {
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  }
  if (path.empty()) {
    why = "no cgroup2 entry in /proc/self/cgroup";
    return "";
  }
  if (mount_root != "/" && path.rfind(mount_root, 0) == 0) path = path.substr(mount_root.size());
  while (!path.empty() && path.back() == '/') path.pop_back();
  return mount_point + path;
}

bool write_file(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

std::vector<pid_t> read_pids(const std::string& path) {
  std::vector<pid_t> pids;
  std::ifstream file(path);
  for (long pid; file >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Kills everything in a cgroup: cgroup.kill where the kernel has it (5.14+;
// it also catches tasks forking at that moment), else each member in turn.
void kill_cgroup_members(const std::string& dir) {
  if (write_file(dir + "/cgroup.kill", "1")) return;
  for (pid_t pid : read_pids(dir + "/cgroup.procs")) kill(pid, SIGKILL);
}

bool cgroup_empty(const std::string& dir) { return read_pids(dir + "/cgroup.procs").empty(); }

void sleep_ms(long ms) {
  timespec pause{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
}

// rmdir succeeds once the last member has exited; bounded so a task stuck in
// the kernel cannot hold the agent forever (the next agent removes the rest).
bool remove_cgroup(const std::string& dir) {
  for (int attempt = 0; attempt < 500; ++attempt) {
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    kill_cgroup_members(dir);
    sleep_ms(10);
  }
  return false;
}

// The backstop for an agent that was itself killed with SIGKILL: cgroups
// named after agents that no longer exist are emptied and removed.
void remove_stale_cgroups(const std::string& parent) {
  DIR* dir = opendir(parent.c_str());
  if (!dir) return;
  std::vector<std::string> stale;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(kPrefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + std::strlen(kPrefix), &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) stale.push_back(parent + "/" + name);
  }
  closedir(dir);
  for (const auto& path : stale) {
    kill_cgroup_members(path);
    remove_cgroup(path);
  }
}

// A fresh cgroup for this agent's worker; empty with `why` set on failure.
std::string create_cgroup(std::string& why) {
  const std::string parent = own_cgroup_dir(why);
  if (parent.empty()) return "";
  remove_stale_cgroups(parent);
  const std::string dir = parent + "/" + kPrefix + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0) {
    why = "cannot create a cgroup in " + parent + ": " + std::strerror(errno);
    return "";
  }
  if (access((dir + "/cgroup.procs").c_str(), W_OK) != 0) {
    why = "cannot write " + dir + "/cgroup.procs: " + std::strerror(errno);
    rmdir(dir.c_str());
    return "";
  }
  return dir;
}

// Every live or zombie process below `root` in the process tree.
std::vector<pid_t> descendants_of(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  DIR* proc = opendir("/proc");
  if (!proc) return {};
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::ifstream stat_file(std::string("/proc/") + entry->d_name + "/stat");
    std::string stat;
    std::getline(stat_file, stat);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(close_paren + 1));
    std::string state;
    long ppid = 0;
    if (rest >> state >> ppid) children.emplace(static_cast<pid_t>(ppid), static_cast<pid_t>(pid));
  }
  closedir(proc);
  std::vector<pid_t> found;
  std::vector<pid_t> queue{root};
  while (!queue.empty()) {
    const pid_t parent = queue.back();
    queue.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      found.push_back(it->second);
      queue.push_back(it->second);
    }
  }
  return found;
}

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal_number : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, signal_number);
  return set;
}

// Kills the cgroup (when there is one) and every descendant, and reaps them
// all: orphans reparent to this subreaper, so "no descendant left" means
// nothing the benchmark started is alive.
void kill_and_reap_everything(const std::string& cgroup) {
  sigset_t child_exit;
  sigemptyset(&child_exit);
  sigaddset(&child_exit, SIGCHLD);
  for (;;) {
    if (!cgroup.empty()) kill_cgroup_members(cgroup);
    const auto pids = descendants_of(getpid());
    for (pid_t pid : pids) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
    if (pids.empty() && (cgroup.empty() || cgroup_empty(cgroup))) return;
    const timespec wait_for{0, 100 * 1000000L};
    sigtimedwait(&child_exit, nullptr, &wait_for);
  }
}

[[noreturn]] void die_like(int signal_number) {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // the worker already dumped its core
  signal(signal_number, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal_number);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(signal_number);
  _exit(128 + signal_number);
}

}  // namespace

std::string containment_method() {
  if (fallback_forced()) return "subreaper (forced by KBENCH_CONTAINMENT=subreaper)";
  std::string why;
  const std::string dir = create_cgroup(why);
  if (dir.empty()) return "subreaper (" + why + ")";
  rmdir(dir.c_str());
  return "cgroup2 " + dir.substr(0, dir.rfind('/'));
}

int run_contained(const std::function<int()>& body) {
  std::string why;
  std::string cgroup = fallback_forced() ? "" : create_cgroup(why);
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  // Blocked here and taken with sigwaitinfo: no handler, no lost signal.
  const sigset_t watched = watched_signals();
  sigset_t previous;
  sigprocmask(SIG_BLOCK, &watched, &previous);
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) throw RunError(std::string("pipe: ") + std::strerror(errno));
  const pid_t supervisor = getpid();
  const pid_t worker = fork();
  if (worker < 0) throw RunError(std::string("fork: ") + std::strerror(errno));
  if (worker == 0) {
    close(go[1]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != supervisor) _exit(127);
    // Wait until the supervisor has moved this process into the cgroup, so
    // that every task the benchmark starts is born inside it.
    char byte;
    while (read(go[0], &byte, 1) < 0 && errno == EINTR) {
    }
    close(go[0]);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return body();
  }
  close(go[0]);
  if (!cgroup.empty() && !write_file(cgroup + "/cgroup.procs", std::to_string(worker))) {
    std::cerr << "kbench-agent: cannot move the benchmark into " << cgroup << " (" << std::strerror(errno)
              << "); containing it as a subreaper\n";
    rmdir(cgroup.c_str());
    cgroup.clear();
  }
  close(go[1]);

  int worker_status = 0;
  int stop_signal = 0;
  for (bool worker_done = false; !worker_done;) {
    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
      if (pid == worker) {
        worker_status = status;
        worker_done = true;
      }
    }
    if (worker_done) break;
    siginfo_t info;
    const int received = sigwaitinfo(&watched, &info);
    if (received == SIGTERM || received == SIGINT || received == SIGHUP) {
      stop_signal = received;
      break;
    }
  }
  kill_and_reap_everything(cgroup);
  // A worker killed with kernel tracing set up (kfunc/*) left the original
  // settings in a journal: restore them now that it is gone.
  for (const auto& line : tracing::restore_abandoned_sessions()) std::cerr << "kbench-agent: " << line << '\n';
  if (!cgroup.empty() && !remove_cgroup(cgroup)) {
    std::cerr << "kbench-agent: cannot remove " << cgroup << ": " << std::strerror(errno) << '\n';
  }
  if (stop_signal != 0) die_like(stop_signal);
  if (WIFSIGNALED(worker_status)) die_like(WTERMSIG(worker_status));
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  return WIFEXITED(worker_status) ? WEXITSTATUS(worker_status) : kExitFailure;
}

}  // namespace kbench::agent
