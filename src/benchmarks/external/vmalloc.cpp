// micromm/vmalloc: the kernel's own vmalloc benchmark, lib/test_vmalloc.c.
// Loading the module runs the selected tests in a kernel thread and prints
// one "Summary: ... avg: N usec" line per test; the init function then fails
// with -EAGAIN so the module unloads itself. We load it once per distinct
// (nr_pages, use_huge, test_loop_count) and read the summaries that appear in
// /dev/kmsg after our own read position.
#include "benchmarks/external/vmalloc.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "benchmarks/benchmark.h"
#include "common/errors.h"

namespace kbench::bench {

std::vector<VmallocSummary> parse_vmalloc_summaries(const std::string& log) {
  static const std::regex summary(
      R"(Summary: (\w+) passed: (\d+) failed: (\d+)(?: xfailed: \d+)? repeat: \d+ loops: (\d+) avg: (\d+) usec)");
  std::vector<VmallocSummary> out;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), summary); it != std::sregex_iterator(); ++it) {
    VmallocSummary s;
    s.test = (*it)[1];
    s.passed = std::stoi((*it)[2]);
    s.failed = std::stoi((*it)[3]);
    s.loops = std::stol((*it)[4]);
    s.avg_usec = std::stod((*it)[5]);
    out.push_back(s);
  }
  return out;
}

namespace {

// Bit positions in run_test_mask: the order of test_case_array[] in
// lib/test_vmalloc.c (new tests are appended there).
const std::vector<std::string>& vmalloc_tests() {
  static const std::vector<std::string> tests = {
      "fix_size_alloc_test",          "full_fit_alloc_test",           "long_busy_list_alloc_test",
      "random_size_alloc_test",       "fix_align_alloc_test",          "random_size_align_alloc_test",
      "align_shift_alloc_test",       "pcpu_alloc_test",               "kvfree_rcu_1_arg_vmalloc_test",
      "kvfree_rcu_2_arg_vmalloc_test", "vm_map_ram_test"};
  return tests;
}

// The seed report's rows: every test at 1 page, fix_size_alloc_test across
// nr_pages with and without huge mappings (fewer loops for the big sizes).
constexpr const char* kSeedCases =
    "fix_align_alloc_test:1:0:500000,"
    "fix_size_alloc_test:1:0:500000,fix_size_alloc_test:4:0:500000,"
    "fix_size_alloc_test:16:0:500000,fix_size_alloc_test:16:1:500000,"
    "fix_size_alloc_test:64:0:100000,fix_size_alloc_test:64:1:100000,"
    "fix_size_alloc_test:256:0:100000,fix_size_alloc_test:256:1:100000,"
    "fix_size_alloc_test:512:0:100000,fix_size_alloc_test:512:1:100000,"
    "full_fit_alloc_test:1:0:500000,kvfree_rcu_1_arg_vmalloc_test:1:0:500000,"
    "kvfree_rcu_2_arg_vmalloc_test:1:0:500000,long_busy_list_alloc_test:1:0:500000,"
    "pcpu_alloc_test:1:0:500000,random_size_align_alloc_test:1:0:500000,"
    "random_size_alloc_test:1:0:500000,vm_map_ram_test:1:0:500000";

struct VmallocCase {
  std::string test;
  long pages = 1;
  int huge = 0;
  long loops = 0;
  int bit = 0;
  std::string label() const {
    return test + ": p:" + std::to_string(pages) + ", h:" + std::to_string(huge) + ", l:" + std::to_string(loops);
  }
};

long parse_positive(const std::string& text, const std::string& what, const std::string& token) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || value <= 0) {
    throw InputError("parameter 'cases': '" + token + "': " + what + " '" + text + "' is not a positive integer");
  }
  return value;
}

std::vector<VmallocCase> parse_cases(const Params& params) {
  const std::string& text = param_string(params, "cases");
  std::vector<VmallocCase> cases;
  std::stringstream in(text);
  std::string token;
  while (std::getline(in, token, ',')) {
    if (token.empty()) continue;
    std::vector<std::string> fields;
    std::stringstream parts(token);
    std::string field;
    while (std::getline(parts, field, ':')) fields.push_back(field);
    if (fields.size() != 4) {
      throw InputError("parameter 'cases': '" + token + "': expected test:nr_pages:use_huge:loops");
    }
    VmallocCase c;
    c.test = fields[0];
    const auto& tests = vmalloc_tests();
    const auto at = std::find(tests.begin(), tests.end(), c.test);
    if (at == tests.end()) {
      throw InputError("parameter 'cases': '" + token + "': unknown test_vmalloc test '" + c.test + "'");
    }
    c.bit = static_cast<int>(at - tests.begin());
    c.pages = parse_positive(fields[1], "nr_pages", token);
    if (fields[2] != "0" && fields[2] != "1") {
      throw InputError("parameter 'cases': '" + token + "': use_huge '" + fields[2] + "' is not 0 or 1");
    }
    c.huge = fields[2] == "1";
    c.loops = parse_positive(fields[3], "loops", token);
    cases.push_back(c);
  }
  if (cases.empty()) throw InputError("parameter 'cases' is empty: expected e.g. fix_size_alloc_test:1:0:500000");
  return cases;
}

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// Runs argv (no shell), output captured; the child dies with the agent.
CommandResult run_command(const std::vector<std::string>& argv) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw RunError(std::string("micromm/vmalloc: pipe: ") + std::strerror(errno));
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    throw RunError(std::string("micromm/vmalloc: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(pipefd[1], STDOUT_FILENO);
    dup2(pipefd[1], STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    const std::string msg = std::string("exec ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  close(pipefd[1]);
  CommandResult result;
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    result.output.append(buf, static_cast<std::size_t>(n));
  }
  close(pipefd[0]);
  while (waitpid(child, &result.status, 0) < 0 && errno == EINTR) {
  }
  while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == ' ')) {
    result.output.pop_back();
  }
  return result;
}

// Where `name` would be executed from, or "" when nowhere.
std::string find_program_or_sbin(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  for (const char* fallback : {"/usr/sbin/", "/sbin/"}) {
    const std::string candidate = std::string(fallback) + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// test_vmalloc's init fails with -EAGAIN on purpose after running the tests.
bool loaded_and_ran(const CommandResult& r) {
  if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) return true;
  return r.output.find("Resource temporarily unavailable") != std::string::npos;
}

class KmsgCursor {
 public:
  KmsgCursor() {
    fd_ = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw RunError(std::string("micromm/vmalloc: open /dev/kmsg: ") + std::strerror(errno));
    lseek(fd_, 0, SEEK_END);  // only records written from now on
  }
  ~KmsgCursor() {
    if (fd_ >= 0) close(fd_);
  }
  KmsgCursor(const KmsgCursor&) = delete;
  KmsgCursor& operator=(const KmsgCursor&) = delete;
  std::string read_new() {
    std::string text;
    char record[8192];
    for (;;) {
      const ssize_t n = read(fd_, record, sizeof record);
      if (n > 0) {
        text.append(record, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EPIPE) continue;  // records overwritten under us: skip on
      if (n < 0 && errno == EINTR) continue;
      break;  // EAGAIN: nothing more
    }
    return text;
  }

 private:
  int fd_ = -1;
};

class Vmalloc final : public Benchmark {
 public:
  std::string name() const override { return "micromm/vmalloc"; }
  std::string description() const override {
    return "vmalloc allocator paths timed in the kernel by the test_vmalloc module (modprobe test_vmalloc "
           "run_test_mask=... nr_pages=p use_huge=h test_loop_count=l); avg usec per test from the kernel log";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"cases", kSeedCases,
         "fix_size_alloc_test:1:0:20000,full_fit_alloc_test:1:0:20000,vm_map_ram_test:1:0:20000",
         "comma-separated test:nr_pages:use_huge:loops, one result class each ('<test>: p:<nr_pages>, "
         "h:<use_huge>, l:<loops> (usec)')"},
        {"modprobe", "modprobe", "modprobe", "the modprobe program to load test_vmalloc with"},
    };
  }

  std::vector<ResultClass> result_classes(const Params& params) const override {
    std::vector<ResultClass> out;
    for (const auto& c : parse_cases(params)) out.push_back({c.label(), "usec", Better::Lower});
    return out;
  }

  void prepare(const Params& params, const Placement& where) override {
    const auto cases = parse_cases(params);
    placement_ = "kernel threads of test_vmalloc (nr_threads=1), not pinned by kbench";
    if (where.cpu >= 0) placement_ += "; --cpu " + std::to_string(where.cpu) + " ignored";
    struct utsname uts {};
    uname(&uts);
    if (!std::filesystem::exists("/proc/modules")) {
      throw SkipBenchmark(std::string("kernel ") + uts.release +
                          " has no loadable module support (/proc/modules absent), so test_vmalloc cannot be loaded");
    }
    if (geteuid() != 0) {
      throw SkipBenchmark("loading test_vmalloc needs root (running as uid " + std::to_string(geteuid()) + ")");
    }
    modprobe_ = find_program_or_sbin(param_string(params, "modprobe"));
    if (modprobe_.empty()) {
      throw SkipBenchmark("modprobe not found ('" + param_string(params, "modprobe") + "' is not an executable in PATH)");
    }
    const CommandResult dry = run_command({modprobe_, "-n", "-v", "test_vmalloc"});
    if (!WIFEXITED(dry.status) || WEXITSTATUS(dry.status) != 0) {
      throw SkipBenchmark(std::string("module test_vmalloc not found for kernel ") + uts.release + ": " +
                          (dry.output.empty() ? "modprobe -n failed" : dry.output));
    }
    // A one-loop trial with every parameter the cases use, so that an old
    // module without nr_pages/use_huge is a skip now, not a failure later.
    long max_pages = 1;
    int max_huge = 0;
    for (const auto& c : cases) {
      max_pages = std::max(max_pages, c.pages);
      max_huge = std::max(max_huge, c.huge);
    }
    KmsgCursor cursor;
    const CommandResult trial = load({1L << cases.front().bit, max_pages, max_huge, 1});
    if (!loaded_and_ran(trial)) throw SkipBenchmark("modprobe test_vmalloc failed: " + trial.output);
    if (parse_vmalloc_summaries(cursor.read_new()).empty()) {
      throw SkipBenchmark("test_vmalloc loaded but printed no Summary line to the kernel log");
    }
  }

  std::vector<Measurement> run_repeat(const Params& params, const Placement& /*where*/) override {
    const auto cases = parse_cases(params);
    // One load per (nr_pages, use_huge, loops), all its tests in one mask.
    std::map<std::tuple<long, int, long>, long> masks;
    for (const auto& c : cases) masks[{c.pages, c.huge, c.loops}] |= 1L << c.bit;
    std::map<std::string, double> value;  // by label
    for (const auto& [key, mask] : masks) {
      const auto [pages, huge, loops] = key;
      KmsgCursor cursor;
      const CommandResult r = load({mask, pages, huge, loops});
      if (!loaded_and_ran(r)) throw RunError("micromm/vmalloc: modprobe test_vmalloc failed: " + r.output);
      for (const auto& s : parse_vmalloc_summaries(cursor.read_new())) {
        if (s.failed > 0) {
          throw RunError("micromm/vmalloc: " + s.test + " failed " + std::to_string(s.failed) + " time(s) (p:" +
                         std::to_string(pages) + ", h:" + std::to_string(huge) + ")");
        }
        VmallocCase c{s.test, pages, huge, loops, 0};
        value[c.label()] = s.avg_usec;
      }
    }
    std::vector<Measurement> out;
    for (const auto& c : cases) {
      const auto it = value.find(c.label());
      if (it == value.end()) {
        throw RunError("micromm/vmalloc: no Summary line for " + c.label() + " in the kernel log");
      }
      out.push_back({{c.label(), "usec", Better::Lower}, it->second});
    }
    return out;
  }

  std::map<std::string, std::string> notes() const override { return {{"placement", placement_}}; }

 private:
  struct Load {
    long mask;
    long pages;
    int huge;
    long loops;
  };
  CommandResult load(const Load& l) const {
    return run_command({modprobe_, "test_vmalloc", "run_test_mask=" + std::to_string(l.mask),
                        "nr_pages=" + std::to_string(l.pages), "use_huge=" + std::to_string(l.huge),
                        "test_loop_count=" + std::to_string(l.loops), "test_repeat_count=1", "nr_threads=1",
                        "sequential_test_order=1"});
  }

  std::string modprobe_;
  std::string placement_;
};

KBENCH_REGISTER("micromm/vmalloc", [] { return std::make_unique<Vmalloc>(); });

}  // namespace
}  // namespace kbench::bench
