// perf/syscall: the loops of `perf bench syscall` (basic, getpgid, fork,
// execve), each timed as a whole with CLOCK_MONOTONIC and reported as
// operations per second, so the numbers line up with perf's.
#include <sys/syscall.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "benchmarks/benchmark.h"
#include "common/elf_machine.h"
#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/clock.h"

namespace kbench::bench {
namespace {

constexpr const char* kHelperName = "kbench-exec-helper";
constexpr const char* kFallbackProgram = "/bin/true";

bool is_executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

std::string directory_of_this_program() {
  char path[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "";
  const std::string exe(path, std::size_t(length));
  const auto slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

// The helper built for this agent's machine: kbench-exec-helper-<machine>
// (how the cross-built agent's helper is named beside the host's), else
// kbench-exec-helper; "" when neither is there. Another machine's helper is
// passed over: on a host with binfmt emulation it would run, but measure the
// emulator.
std::string helper_beside_agent() {
  const std::string directory = directory_of_this_program();
  for (const std::string& name : {std::string(kHelperName) + "-" + kBuiltForMachine, std::string(kHelperName)}) {
    const std::string candidate = directory + "/" + name;
    if (is_executable(candidate) && elf_machine(candidate) == kBuiltForMachine) return candidate;
  }
  return "";
}

void wait_for_clean_exit(pid_t child, const char* what) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw RunError(std::string(what) + ": waitpid: " + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw RunError(std::string(what) + ": child ended with status " + std::to_string(status));
  }
}

pid_t fork_or_throw(const char* what) {
  const pid_t child = fork();
  if (child < 0) throw RunError(std::string(what) + ": fork: " + std::strerror(errno));
  return child;
}

class PerfSyscall : public Benchmark {
 public:
  std::string name() const override { return "perf/syscall"; }
  std::string description() const override {
    return "perf bench syscall loops: getppid, getpgid, fork+_exit+wait, fork+execve+wait; "
           "each loop timed with CLOCK_MONOTONIC";
  }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec{"loops", "10000000", "1000000", "getppid and getpgid calls per repeat (perf's -l)"}.integer(1, 1e10),
            ParamSpec{"fork_loops", "10000", "1000", "fork + _exit + waitpid rounds per repeat"}.integer(1, 1e9),
            ParamSpec{"execve_loops", "10000", "500", "fork + execve + waitpid rounds per repeat"}.integer(1, 1e9),
            {"helper", "", "",
             "program execve runs; empty: kbench-exec-helper[-<machine>] next to the agent, else /bin/true"}};
  }
  std::vector<ResultClass> result_classes(const Params&) const override {
    return {{"basic", "ops/sec", Better::Higher},
            {"getpgid", "ops/sec", Better::Higher},
            {"fork", "ops/sec", Better::Higher},
            {"execve", "ops/sec", Better::Higher}};
  }

  void prepare(const Params& params, const Placement& where) override {
    loops_ = param_int(params, "loops");
    fork_loops_ = param_int(params, "fork_loops");
    execve_loops_ = param_int(params, "execve_loops");
    const std::string& helper = params.at("helper");
    notes_.clear();
    if (!helper.empty()) {
      if (!is_executable(helper)) {
        throw InputError("parameter 'helper=" + helper + "': expected an executable file");
      }
      program_ = helper;
    } else if (const std::string beside = helper_beside_agent(); !beside.empty()) {
      program_ = beside;
    } else if (is_executable(kFallbackProgram)) {
      program_ = kFallbackProgram;
      notes_["execve_fallback"] = std::string(kHelperName) + " for " + kBuiltForMachine +
                                  " not found next to the agent (in " + directory_of_this_program() +
                                  "); execve runs " + kFallbackProgram + ", whose dynamic loading makes it slower";
    } else {
      throw SkipBenchmark(std::string("no program to execve: neither ") + kHelperName +
                          " next to the agent nor " + kFallbackProgram);
    }
    notes_["execve_program"] = program_;
    if (const int error = execve_error(program_)) {
      // Under qemu-user the host kernel execs the helper, which needs a
      // binfmt_misc entry for the agent's architecture; without one nothing
      // the agent's execve loop could time would be an execve.
      throw SkipBenchmark("execve of " + program_ + " fails: " + std::strerror(error) +
                          (error == ENOEXEC ? " (the kernel cannot run this agent's architecture natively: "
                                              "an emulator without binfmt_misc for it?)"
                                            : ""));
    }
    if (where.cpu >= 0) timing::pin_to_cpu(where.cpu);
  }

  std::vector<Measurement> run_repeat(const Params&, const Placement&) override {
    const auto rcs = result_classes({});
    return {{rcs[0], ops_per_second(loops_, [] { syscall(SYS_getppid); })},
            {rcs[1], ops_per_second(loops_, [] { syscall(SYS_getpgid, 0); })},
            {rcs[2], ops_per_second(fork_loops_, [] { fork_exit_wait(); })},
            {rcs[3], ops_per_second(execve_loops_, [this] { fork_execve_wait(); })}};
  }

  std::map<std::string, std::string> notes() const override { return notes_; }

 private:
  template <typename Operation>
  static double ops_per_second(std::int64_t loops, Operation operation) {
    const double start = timing::monotonic_seconds();
    for (std::int64_t i = 0; i < loops; ++i) operation();
    const double seconds = timing::monotonic_seconds() - start;
    if (!(seconds > 0)) throw RunError("loop of " + std::to_string(loops) + " took no measurable time");
    return double(loops) / seconds;
  }

  static void fork_exit_wait() {
    const pid_t child = fork_or_throw("fork");
    if (child == 0) _exit(0);
    wait_for_clean_exit(child, "fork");
  }

  // 0 when `program` can be exec'ed here, else execve's errno: one try,
  // the errno passed back through a pipe the exec closes.
  static int execve_error(const std::string& program) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) throw RunError(std::string("execve probe: pipe: ") + std::strerror(errno));
    const pid_t child = fork_or_throw("execve probe");
    if (child == 0) {
      close(report[0]);
      char* const argv[] = {const_cast<char*>(program.c_str()), nullptr};
      char* const envp[] = {nullptr};
      execve(program.c_str(), argv, envp);
      const int error = errno;
      (void)!write(report[1], &error, sizeof error);
      _exit(127);
    }
    close(report[1]);
    int error = 0;
    ssize_t got = 0;
    while ((got = read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
    }
    close(report[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return got == ssize_t(sizeof error) ? error : 0;
  }

  void fork_execve_wait() {
    const pid_t child = fork_or_throw("execve");
    if (child == 0) {
      char* const argv[] = {const_cast<char*>(program_.c_str()), nullptr};
      char* const envp[] = {nullptr};
      execve(program_.c_str(), argv, envp);
      _exit(127);
    }
    wait_for_clean_exit(child, ("execve of " + program_).c_str());
  }

  std::int64_t loops_ = 0;
  std::int64_t fork_loops_ = 0;
  std::int64_t execve_loops_ = 0;
  std::string program_;
  std::map<std::string, std::string> notes_;
};

KBENCH_REGISTER("perf/syscall", [] { return std::make_unique<PerfSyscall>(); });

}  // namespace
}  // namespace kbench::bench
