// mmtests/kernbench: wall-clock, system and user time of building a kernel
// tree with make -j N, as mmtests' kernbench reports them. The tree given
// with --param source=PATH is never written to: the build goes to a private
// O= directory that finish() removes (and that a later run removes if the
// agent was killed before finish()).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "common/errors.h"
#include "timing/clock.h"

namespace kbench::bench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWorkPrefix = "kbench-kernbench-";

struct KernbenchParams {
  std::string source;
  int jobs = 0;
  std::string config;
  std::string target;
  std::string workdir;
};

KernbenchParams parse_kernbench_params(const Params& params) {
  KernbenchParams p;
  p.source = param_string(params, "source");
  const std::int64_t jobs = param_int(params, "jobs");
  p.jobs = jobs == 0 ? static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) : static_cast<int>(jobs);
  p.config = param_string(params, "config");
  p.target = param_string(params, "target");
  p.workdir = param_string(params, "workdir");
  for (const auto* value : {&p.config, &p.target}) {
    if (value->empty() || value->find_first_of(" \t/=") != std::string::npos || (*value)[0] == '-') {
      throw InputError("parameter '" + std::string(value == &p.config ? "config" : "target") + "=" + *value +
                       "': expected a make target such as defconfig or vmlinux");
    }
  }
  return p;
}

std::string label(const char* what, const KernbenchParams& p) {
  std::string name = std::string("kernbench-") + what + "-" + std::to_string(p.jobs);
  if (p.config != "defconfig") name += ": config:" + p.config;
  return name;
}

bool file_contains(const fs::path& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(needle, 0) == 0) return true;
  }
  return false;
}

// Why `source` cannot be built out of tree, or "".
std::string not_buildable(const std::string& source) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) return source + " is not a directory";
  const fs::path root(source);
  if (!fs::exists(root / "Makefile") || !file_contains(root / "Makefile", "VERSION =") ||
      !file_contains(root / "Makefile", "PATCHLEVEL =") || !fs::exists(root / "Kbuild") ||
      !fs::is_directory(root / "arch")) {
    return source + " is not a kernel source tree (expected a top-level Makefile with VERSION/PATCHLEVEL, Kbuild "
                    "and arch/)";
  }
  if (fs::exists(root / ".config") || fs::exists(root / "include" / "config")) {
    return source + " has in-tree build output (.config or include/config); building with O= needs a clean "
                    "tree: run 'make mrproper' there";
  }
  return "";
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Whether `pid` has ended: it is gone, or a zombie. A killed agent whose
// parent died with it stays a zombie until PID 1 reaps it, which on some
// machines takes seconds; its directory is stale all the same.
bool has_ended(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

// Work directories whose agent has ended: left by a SIGKILL.
void remove_stale_workdirs(const std::string& workdir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(workdir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kWorkPrefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + std::strlen(kWorkPrefix), nullptr, 10);
    if (pid > 0 && has_ended(static_cast<pid_t>(pid))) fs::remove_all(entry.path(), ec);
  }
}

struct MakeRun {
  int status = -1;
  double elapsed = 0;
  double user = 0;
  double system = 0;
};

// Runs make with `args`, output appended to `log`. The rusage of the make
// process covers every compiler it waited for.
MakeRun run_make(const std::string& make, const std::vector<std::string>& args, const fs::path& log) {
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw RunError("mmtests/kernbench: cannot open " + log.string() + ": " + std::strerror(errno));
  const pid_t parent = getpid();
  MakeRun run;
  const double start = timing::monotonic_seconds();
  const pid_t child = fork();
  if (child < 0) {
    close(log_fd);
    throw RunError(std::string("mmtests/kernbench: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(make.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(make.c_str(), argv.data());
    _exit(127);
  }
  close(log_fd);
  rusage usage{};
  while (wait4(child, &run.status, 0, &usage) < 0) {
    if (errno != EINTR) throw RunError(std::string("mmtests/kernbench: wait4: ") + std::strerror(errno));
  }
  run.elapsed = timing::monotonic_seconds() - start;
  run.user = static_cast<double>(usage.ru_utime.tv_sec) + static_cast<double>(usage.ru_utime.tv_usec) * 1e-6;
  run.system = static_cast<double>(usage.ru_stime.tv_sec) + static_cast<double>(usage.ru_stime.tv_usec) * 1e-6;
  return run;
}

std::string log_tail(const fs::path& log, std::size_t lines) {
  std::ifstream in(log);
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += (out.empty() ? "" : " | ") + l;
  return out;
}

class Kernbench final : public Benchmark {
 public:
  std::string name() const override { return "mmtests/kernbench"; }
  std::string description() const override {
    return "elapsed, system and user seconds of 'make -j N vmlinux' of a kernel tree (defconfig) in a private "
           "O= build directory, as mmtests kernbench";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"source", "", "", "kernel source tree to build (required; never written to; must be mrproper-clean)"},
        ParamSpec{"jobs", "0", "0", "make -j N; 0 = one job per online CPU (N is part of the result class name)"}
            .integer(0, 4096),
        {"config", "defconfig", "tinyconfig", "make target that writes .config (named in the result class unless defconfig)"},
        {"target", "vmlinux", "vmlinux", "make target that is timed"},
        {"workdir", "/var/tmp", "/var/tmp", "where the temporary O= build directory is created"},
    };
  }
  std::vector<ResultClass> result_classes(const Params& params) const override {
    const KernbenchParams p = parse_kernbench_params(params);
    return {{label("elsp", p), "seconds", Better::Lower},
            {label("syst", p), "seconds", Better::Lower},
            {label("user", p), "seconds", Better::Lower}};
  }

  void prepare(const Params& params, const Placement& where) override {
    const KernbenchParams p = parse_kernbench_params(params);
    placement_ = "make -j " + std::to_string(p.jobs) + " on all CPUs the agent may use";
    if (where.cpu >= 0) placement_ += " (--cpu " + std::to_string(where.cpu) + " not applied: a parallel build)";
    if (p.source.empty()) throw SkipBenchmark("no kernel source given (--param source=PATH)");
    const std::string why = not_buildable(p.source);
    if (!why.empty()) throw SkipBenchmark(why);
    make_ = find_program("make");
    if (make_.empty()) throw SkipBenchmark("make not found in PATH");
    std::error_code ec;
    if (!fs::is_directory(p.workdir, ec)) {
      throw InputError("parameter 'workdir=" + p.workdir + "': not a directory");
    }
    remove_stale_workdirs(p.workdir);
    std::string templ = (fs::path(p.workdir) / (std::string(kWorkPrefix) + std::to_string(getpid()) + "-XXXXXX")).string();
    if (!mkdtemp(templ.data())) {
      throw RunError("mmtests/kernbench: cannot create a directory in " + p.workdir + ": " + std::strerror(errno));
    }
    work_ = templ;
    fs::create_directory(work_ / "build");
    const MakeRun config = run_make(make_, {"-C", p.source, "O=" + (work_ / "build").string(), p.config},
                                    work_ / "make.log");
    if (!WIFEXITED(config.status) || WEXITSTATUS(config.status) != 0) {
      throw RunError("mmtests/kernbench: make " + p.config + " failed: " + log_tail(work_ / "make.log", 5));
    }
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement& /*where*/) override {
    const KernbenchParams p = parse_kernbench_params(params);
    if (work_.empty()) throw RunError("mmtests/kernbench: run_repeat() before prepare()");
    const std::string out = "O=" + (work_ / "build").string();
    // Every repeat builds from scratch with the same .config, as mmtests does.
    const MakeRun clean = run_make(make_, {"-C", p.source, out, "clean"}, work_ / "make.log");
    if (!WIFEXITED(clean.status) || WEXITSTATUS(clean.status) != 0) {
      throw RunError("mmtests/kernbench: make clean failed: " + log_tail(work_ / "make.log", 5));
    }
    const MakeRun build =
        run_make(make_, {"-C", p.source, out, "-j", std::to_string(p.jobs), p.target}, work_ / "make.log");
    if (!WIFEXITED(build.status) || WEXITSTATUS(build.status) != 0) {
      throw RunError("mmtests/kernbench: make " + p.target + " failed: " + log_tail(work_ / "make.log", 5));
    }
    return {{{label("elsp", p), "seconds", Better::Lower}, build.elapsed},
            {{label("syst", p), "seconds", Better::Lower}, build.system},
            {{label("user", p), "seconds", Better::Lower}, build.user}};
  }

  void finish() override {
    if (!work_.empty()) {
      std::error_code ec;
      fs::remove_all(work_, ec);
      work_.clear();
    }
  }
  ~Kernbench() override { finish(); }

  std::map<std::string, std::string> notes() const override {
    return {{"placement", placement_.empty() ? "make on all CPUs" : placement_}};
  }

 private:
  std::string make_;
  fs::path work_;
  std::string placement_;
};

KBENCH_REGISTER("mmtests/kernbench", [] { return std::make_unique<Kernbench>(); });

}  // namespace
}  // namespace kbench::bench
