// perf/mem, micromm/*, lmbench/lat-mem-rd and mmtests/kernbench: each runs at
// its smallest size and returns finite, positive values for exactly its
// declared result classes; bad parameters are InputError; skip paths throw
// SkipBenchmark; a killed agent leaves no process behind. No timing asserted.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/external/vmalloc.h"
#include "common/errors.h"
#include "support/process_group.h"
#include "support/test_paths.h"

namespace kb = kbench::bench;
using kbench::InputError;
using kbench::Params;
using kbench::SkipBenchmark;

namespace {

std::unique_ptr<kb::Benchmark> make(const std::string& name) {
  auto b = kb::Registry::instance().create(name);
  EXPECT_NE(b, nullptr) << name << " is not registered";
  return b;
}

// Runs one repeat at quick size with `overrides` and checks the contract:
// exactly the declared classes, in order, each finite and positive.
std::vector<kb::Measurement> run_quick(const std::string& name, const Params& overrides, int cpu = 0) {
  auto b = make(name);
  const Params params = kb::resolve_params(*b, kb::Size::Quick, overrides);
  const auto declared = b->result_classes(params);
  EXPECT_FALSE(declared.empty());
  kb::Placement where;
  where.cpu = cpu;
  b->prepare(params, where);
  std::vector<kb::Measurement> got;
  try {
    got = b->run_repeat(params, where);
  } catch (...) {
    b->finish();
    throw;
  }
  const auto notes = b->notes();
  EXPECT_TRUE(notes.count("placement")) << name << " does not report its placement";
  b->finish();
  EXPECT_EQ(got.size(), declared.size()) << name;
  for (std::size_t i = 0; i < std::min(got.size(), declared.size()); ++i) {
    EXPECT_EQ(got[i].result_class, declared[i]) << name << " result " << i;
    EXPECT_TRUE(std::isfinite(got[i].value)) << got[i].result_class.label();
    EXPECT_GT(got[i].value, 0) << got[i].result_class.label();
  }
  return got;
}

std::vector<std::string> labels(const std::vector<kb::Measurement>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m.result_class.label());
  return out;
}

bool thp_enabled() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  return !line.empty() && line.find("[never]") == std::string::npos;
}

template <typename Fn>
void expect_input_error(Fn fn, const std::string& what) {
  EXPECT_THROW(fn(), InputError) << what;
}

}  // namespace

// ---------------------------------------------------------------- perf/mem

TEST(PerfMem, QuickRunReturnsDeclaredClasses) {
  const auto got = run_quick("perf/mem", {{"memset_size", "64MB"}, {"memset_chunk", "16MB"},
                                          {"mmap_size", "32MB"}, {"mmap_loops", "1"}});
  const auto names = labels(got);
  EXPECT_EQ(names.front(), "memset -k 16MB -f default -s 64MB -l 4 (bytes/sec)");
  EXPECT_NE(std::find(names.begin(), names.end(), "mmap -p 4KB -f demand -s 32MB -l 1 (bytes/sec)"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "mmap -p 4KB -f populate -s 32MB -l 1 (bytes/sec)"), names.end());
  const bool has_2mb =
      std::find(names.begin(), names.end(), "mmap -p 2MB -f demand -s 32MB -l 1 (bytes/sec)") != names.end();
  EXPECT_EQ(has_2mb, thp_enabled()) << "2MB rows must exist exactly when THP can provide them";
}

TEST(PerfMem, SeedNameWhenOneLoop) {
  auto b = make("perf/mem");
  const auto params = kb::resolve_params(*b, kb::Size::Default,
                                         {{"memset_size", "16GB"}, {"memset_chunk", "1GB"}, {"memset_loops", "1"},
                                          {"tests", "memset"}});
  const auto classes = b->result_classes(params);
  ASSERT_EQ(classes.size(), 1u);
  EXPECT_EQ(classes[0].label(), "memset -k 1GB -f default -s 16GB (bytes/sec)");
  EXPECT_EQ(classes[0].better, kbench::Better::Higher);
}

TEST(PerfMem, HugetlbWithoutFreePagesDropsOnlyThoseRows) {
  std::ifstream in("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
  long free_pages = 0;
  in >> free_pages;
  if (free_pages >= 16) GTEST_SKIP() << "this machine has free 2MB hugetlb pages";
  auto b = make("perf/mem");
  const auto params = kb::resolve_params(*b, kb::Size::Quick, {{"huge", "hugetlb"}, {"tests", "mmap"},
                                                               {"mmap_size", "32MB"}});
  for (const auto& c : b->result_classes(params)) EXPECT_EQ(c.name.find("-p 2MB"), std::string::npos) << c.name;
  // Only 2MB requested and none available: the whole benchmark cannot run.
  const auto only_2mb = kb::resolve_params(*b, kb::Size::Quick, {{"huge", "hugetlb"}, {"tests", "mmap"},
                                                                 {"pages", "2MB"}, {"mmap_size", "32MB"}});
  EXPECT_TRUE(b->result_classes(only_2mb).empty());
  EXPECT_THROW(b->prepare(only_2mb, {}), SkipBenchmark);
  b->finish();
}

TEST(PerfMem, BadParametersAreInputErrors) {
  auto b = make("perf/mem");
  auto with = [&](Params o) { return kb::resolve_params(*b, kb::Size::Quick, o); };
  expect_input_error([&] { b->result_classes(with({{"pages", "64KB"}})); }, "page size");
  expect_input_error([&] { b->result_classes(with({{"faults", "lazy"}})); }, "fault mode");
  expect_input_error([&] { b->result_classes(with({{"memset_chunk", "1GB"}})); }, "chunk > size");
  expect_input_error([&] { b->result_classes(with({{"mmap_size", "3MB"}})); }, "size not a page multiple");
  expect_input_error([&] { b->result_classes(with({{"huge", "yes"}})); }, "huge");
  expect_input_error([&] { b->result_classes(with({{"tests", "memcpy"}})); }, "tests");
  expect_input_error([&] { b->result_classes(with({{"mmap_loops", "0"}})); }, "loops");
  EXPECT_THROW(kb::resolve_params(*b, kb::Size::Quick, {{"nosuch", "1"}}), InputError);
}

// ---------------------------------------------------------------- micromm

TEST(MicroMm, ForkQuickRun) {
  const auto got = run_quick("micromm/fork", {{"d", "0.1"}, {"size", "64MB"}});
  EXPECT_EQ(labels(got).front(), "fork: p:1, d:0.1, s:64MB (seconds)");
  EXPECT_EQ(got.size(), thp_enabled() ? 2u : 1u);
}

TEST(MicroMm, MunmapQuickRun) {
  const auto got = run_quick("micromm/munmap", {{"d", "0.1"}, {"size", "64MB"}});
  EXPECT_EQ(labels(got).front(), "munmap: p:1, d:0.1, s:64MB (seconds)");
  if (thp_enabled()) {
    EXPECT_EQ(labels(got).back(), "munmap: p:512, d:0.1, s:64MB (seconds)");
  }
}

TEST(MicroMm, SeedNamesAtDefaultSize) {
  auto b = make("micromm/fork");
  const auto classes = b->result_classes(kb::resolve_params(*b, kb::Size::Default, {}));
  ASSERT_FALSE(classes.empty());
  EXPECT_EQ(classes[0].label(), "fork: p:1, d:10 (seconds)");
  EXPECT_EQ(classes[0].better, kbench::Better::Lower);
  if (thp_enabled()) {
    ASSERT_EQ(classes.size(), 2u);
    EXPECT_EQ(classes[1].label(), "fork: p:512, d:10 (seconds)");
  }
}

TEST(MicroMm, BadParametersAreInputErrors) {
  for (const std::string name : {"micromm/fork", "micromm/munmap"}) {
    auto b = make(name);
    auto with = [&](Params o) { return kb::resolve_params(*b, kb::Size::Quick, o); };
    expect_input_error([&] { b->result_classes(with({{"p", "16"}})); }, name + " p");
    expect_input_error([&] { b->result_classes(with({{"d", "0"}})); }, name + " d");
    expect_input_error([&] { b->result_classes(with({{"d", "ten"}})); }, name + " d text");
    expect_input_error([&] { b->result_classes(with({{"size", "3MB"}})); }, name + " size");
  }
}

// ---------------------------------------------------------------- micromm/vmalloc

TEST(MicroMmVmalloc, DefaultCasesFollowTheSeed) {
  auto b = make("micromm/vmalloc");
  const auto classes = b->result_classes(kb::resolve_params(*b, kb::Size::Default, {}));
  std::set<std::string> names;
  for (const auto& c : classes) {
    names.insert(c.label());
    EXPECT_EQ(c.better, kbench::Better::Lower);
  }
  EXPECT_TRUE(names.count("fix_size_alloc_test: p:1, h:0, l:500000 (usec)"));
  EXPECT_TRUE(names.count("fix_size_alloc_test: p:512, h:1, l:100000 (usec)"));
  EXPECT_TRUE(names.count("vm_map_ram_test: p:1, h:0, l:500000 (usec)"));
  EXPECT_EQ(classes.size(), 19u);
}

TEST(MicroMmVmalloc, SkipsWithAReasonWhenTheModuleCannotBeLoaded) {
  auto b = make("micromm/vmalloc");
  const auto params = kb::resolve_params(*b, kb::Size::Quick, {});
  const bool modules = std::filesystem::exists("/proc/modules");
  const bool module_file = std::filesystem::exists("/lib/modules");
  if (modules && module_file && geteuid() == 0) GTEST_SKIP() << "test_vmalloc may really load here";
  try {
    b->prepare(params, {});
    FAIL() << "expected SkipBenchmark";
  } catch (const SkipBenchmark& e) {
    const std::string why = e.what();
    EXPECT_FALSE(why.empty());
    if (!modules) {
      EXPECT_NE(why.find("module"), std::string::npos) << why;
    }
  }
  b->finish();
}

TEST(MicroMmVmalloc, SkipsWhenModprobeIsAbsent) {
  auto b = make("micromm/vmalloc");
  const auto params = kb::resolve_params(*b, kb::Size::Quick, {{"modprobe", "/nonexistent/modprobe"}});
  EXPECT_THROW(b->prepare(params, {}), SkipBenchmark);
  b->finish();
}

TEST(MicroMmVmalloc, ParsesKernelSummaries) {
  const std::string log =
      "6,1234,5678,-;Summary: fix_size_alloc_test passed: 1 failed: 0 repeat: 1 loops: 500000 avg: 374395 usec\n"
      "6,1235,5679,-;Summary: vm_map_ram_test passed: 1 failed: 0 xfailed: 0 repeat: 1 loops: 500000 avg: 81248 usec\n"
      "6,1236,5680,-;All test took worker0=123456 cycles\n"
      "[  12.3] Summary: pcpu_alloc_test passed: 0 failed: 1 repeat: 1 loops: 10 avg: 5 usec\n";
  const auto got = kb::parse_vmalloc_summaries(log);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].test, "fix_size_alloc_test");
  EXPECT_EQ(got[0].passed, 1);
  EXPECT_EQ(got[0].failed, 0);
  EXPECT_DOUBLE_EQ(got[0].avg_usec, 374395);
  EXPECT_EQ(got[1].test, "vm_map_ram_test");
  EXPECT_DOUBLE_EQ(got[1].avg_usec, 81248);
  EXPECT_EQ(got[2].failed, 1);
}

TEST(MicroMmVmalloc, BadCasesAreInputErrors) {
  auto b = make("micromm/vmalloc");
  auto with = [&](Params o) { return kb::resolve_params(*b, kb::Size::Quick, o); };
  expect_input_error([&] { b->result_classes(with({{"cases", "no_such_test:1:0:100"}})); }, "unknown test");
  expect_input_error([&] { b->result_classes(with({{"cases", "fix_size_alloc_test:1:0"}})); }, "missing field");
  expect_input_error([&] { b->result_classes(with({{"cases", "fix_size_alloc_test:x:0:100"}})); }, "bad pages");
  expect_input_error([&] { b->result_classes(with({{"cases", "fix_size_alloc_test:1:2:100"}})); }, "bad huge");
  expect_input_error([&] { b->result_classes(with({{"cases", ""}})); }, "empty");
}

// ---------------------------------------------------------------- lmbench/lat-mem-rd

TEST(LatMemRd, QuickRunReturnsDeclaredClasses) {
  const auto got = run_quick("lmbench/lat-mem-rd", {{"sizes", "1MB,4MB"}, {"duration", "0.02"}});
  const std::vector<std::string> expected = {
      "size:1MB P:1 stride:128B rnd_read_lat (ns)", "size:1MB P:1 stride:128B seq_read_lat (ns)",
      "size:4MB P:1 stride:128B rnd_read_lat (ns)", "size:4MB P:1 stride:128B seq_read_lat (ns)"};
  EXPECT_EQ(labels(got), expected);
}

TEST(LatMemRd, DefaultSizesFollowTheSeed) {
  auto b = make("lmbench/lat-mem-rd");
  const auto classes = b->result_classes(kb::resolve_params(*b, kb::Size::Default, {}));
  ASSERT_EQ(classes.size(), 8u);
  EXPECT_EQ(classes.front().label(), "size:4MB P:1 stride:128B rnd_read_lat (ns)");
  EXPECT_EQ(classes.back().label(), "size:256MB P:1 stride:128B seq_read_lat (ns)");
  for (const auto& c : classes) EXPECT_EQ(c.better, kbench::Better::Lower);
}

TEST(LatMemRd, BadParametersAreInputErrors) {
  auto b = make("lmbench/lat-mem-rd");
  auto with = [&](Params o) { return kb::resolve_params(*b, kb::Size::Quick, o); };
  expect_input_error([&] { b->result_classes(with({{"stride", "100B"}})); }, "stride not a multiple of 8");
  expect_input_error([&] { b->result_classes(with({{"stride", "8KB"}})); }, "stride too big");
  expect_input_error([&] { b->result_classes(with({{"sizes", "100B"}})); }, "size below two strides");
  expect_input_error([&] { b->result_classes(with({{"sizes", "4XB"}})); }, "size unit");
  expect_input_error([&] { b->result_classes(with({{"sizes", ""}})); }, "no sizes");
  expect_input_error([&] { b->result_classes(with({{"duration", "-1"}})); }, "duration");
}

// ---------------------------------------------------------------- mmtests/kernbench

namespace {

// A scratch directory removed when the test ends.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "kbench-memtest-XXXXXX").string();
    path = mkdtemp(templ.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Looks like a kernel tree to kernbench and builds "vmlinux" with real
// processes (so user and system time are non-zero) into $(O).
void make_fake_kernel_tree(const std::filesystem::path& root) {
  std::filesystem::create_directories(root / "arch" / "x86");
  write_file(root / "Kbuild", "# fake\n");
  write_file(root / "Makefile",
             "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n"
             "defconfig tinyconfig:\n\t@echo CONFIG_FAKE=y > $(O)/.config\n"
             "clean:\n\t@rm -f $(O)/vmlinux\n"
             "vmlinux:\n\t@test -f $(O)/.config\n"
             "\t@for i in $$(seq 100); do cat /proc/self/stat > /dev/null; done\n"
             "\t@i=0; while [ $$i -lt 30000 ]; do i=$$((i+1)); done; cp $(O)/.config $(O)/vmlinux\n");
}

}  // namespace

TEST(Kernbench, SkipsWithoutSource) {
  auto b = make("mmtests/kernbench");
  const auto params = kb::resolve_params(*b, kb::Size::Default, {});
  try {
    b->prepare(params, {});
    FAIL() << "expected SkipBenchmark";
  } catch (const SkipBenchmark& e) {
    EXPECT_STREQ(e.what(), "no kernel source given (--param source=PATH)");
  }
  b->finish();
}

TEST(Kernbench, SkipsWhenSourceIsNotAKernelTree) {
  ScratchDir dir;
  write_file(dir.path / "Makefile", "all:\n\ttrue\n");
  for (const std::string& source : {std::string("/nonexistent/linux"), dir.path.string()}) {
    auto b = make("mmtests/kernbench");
    const auto params = kb::resolve_params(*b, kb::Size::Default, {{"source", source}});
    try {
      b->prepare(params, {});
      FAIL() << "expected SkipBenchmark for " << source;
    } catch (const SkipBenchmark& e) {
      EXPECT_NE(std::string(e.what()).find(source), std::string::npos) << e.what();
    }
    b->finish();
  }
}

TEST(Kernbench, SkipsWhenTreeHasInTreeBuildOutput) {
  ScratchDir dir;
  make_fake_kernel_tree(dir.path);
  write_file(dir.path / ".config", "CONFIG_FAKE=y\n");
  auto b = make("mmtests/kernbench");
  const auto params = kb::resolve_params(*b, kb::Size::Default, {{"source", dir.path.string()}});
  try {
    b->prepare(params, {});
    FAIL() << "expected SkipBenchmark";
  } catch (const SkipBenchmark& e) {
    EXPECT_NE(std::string(e.what()).find("mrproper"), std::string::npos) << e.what();
  }
  b->finish();
}

TEST(Kernbench, BuildsAFakeTreeOutOfTreeAndCleansUp) {
  ScratchDir src, work;
  make_fake_kernel_tree(src.path);
  const std::string n = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
  const auto got = run_quick("mmtests/kernbench",
                             {{"source", src.path.string()}, {"workdir", work.path.string()}, {"config", "defconfig"}});
  const std::vector<std::string> expected = {"kernbench-elsp-" + n + " (seconds)", "kernbench-syst-" + n + " (seconds)",
                                             "kernbench-user-" + n + " (seconds)"};
  EXPECT_EQ(labels(got), expected);
  EXPECT_TRUE(std::filesystem::is_empty(work.path)) << "the O= build directory was left behind";
  EXPECT_FALSE(std::filesystem::exists(src.path / "vmlinux")) << "the source tree was written to";
}

TEST(Kernbench, NamesJobsAndNonDefaultConfig) {
  auto b = make("mmtests/kernbench");
  const auto classes =
      b->result_classes(kb::resolve_params(*b, kb::Size::Quick, {{"jobs", "64"}, {"config", "tinyconfig"}}));
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_EQ(classes[0].label(), "kernbench-elsp-64: config:tinyconfig (seconds)");
  const auto seed = b->result_classes(kb::resolve_params(*b, kb::Size::Default, {{"jobs", "64"}}));
  EXPECT_EQ(seed[1].label(), "kernbench-syst-64 (seconds)");
  EXPECT_EQ(seed[2].label(), "kernbench-user-64 (seconds)");
}

TEST(Kernbench, BadParametersAreInputErrors) {
  auto b = make("mmtests/kernbench");
  auto with = [&](Params o) { return kb::resolve_params(*b, kb::Size::Quick, o); };
  expect_input_error([&] { b->result_classes(with({{"jobs", "-1"}})); }, "jobs");
  expect_input_error([&] { b->result_classes(with({{"jobs", "many"}})); }, "jobs text");
  expect_input_error([&] { b->result_classes(with({{"config", "-f /etc/passwd"}})); }, "config");
  expect_input_error([&] { b->result_classes(with({{"target", ""}})); }, "target");
}

// ---------------------------------------------------------------- clean-up after SIGKILL

namespace {

// Live processes of the agent's group, as "PID (comm)".
std::vector<std::string> leftovers_of(pid_t agent) {
  std::vector<std::string> found;
  for (const auto& process : kbench::testing::live_processes_of(agent)) found.push_back(process.stat);
  return found;
}

bool agent_knows(const std::string& agent, const std::string& benchmark) {
  const std::string cmd = agent + " list 2>/dev/null | grep -q '" + benchmark + "'";
  return std::system(cmd.c_str()) == 0;
}

// `running(agent)` says when the benchmark is far enough into its run for the
// kill to test something; it is looked for rather than waited a fixed time,
// since an agent under a sanitizer on a loaded machine can take many seconds
// to get there.
void kill_mid_run_leaves_nothing(const std::string& benchmark, const std::vector<std::string>& extra,
                                 const std::function<bool(pid_t)>& running) {
  const std::string agent = std::string(KBENCH_BINARY_DIR) + "/kbench-agent";
  if (access(agent.c_str(), X_OK) != 0) FAIL() << agent << " is not built";
  // A renamed benchmark must fail this test, not silently skip it.
  if (!agent_knows(agent, benchmark)) FAIL() << "kbench-agent does not know " << benchmark;
  std::vector<std::string> args = {agent, "run", "--benchmark", benchmark, "--size", "quick",
                                   "--warmups", "0", "--repeats", "100", "--cpu", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setpgid(0, 0);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(agent.c_str(), argv.data());
    _exit(127);
  }
  setpgid(child, child);  // either side may win the race; both set the same group
  int status = 0;
  bool started = false;
  // The two minutes only bound an agent that never gets there.
  for (int look = 0; look < 1200 && !started; ++look) {
    ASSERT_EQ(waitpid(child, &status, WNOHANG), 0) << "the agent ended before it could be killed mid-run";
    started = running(child);
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(started) << benchmark << " did not get into its run within two minutes";
  // The scan must see the live group (the agent leads it), or an empty
  // result after the kill would prove nothing.
  EXPECT_FALSE(leftovers_of(child).empty()) << "the /proc scan does not see the running agent";
  ASSERT_EQ(kill(-child, SIGKILL), 0);
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // Orphans are reparented and reaped asynchronously: allow them a moment.
  std::vector<std::string> left;
  for (int i = 0; i < 50; ++i) {
    left = leftovers_of(child);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
}

}  // namespace

TEST(CleanUp, KilledForkBenchmarkLeavesNoProcess) {
  // The agent, its contained child and a forked child of the benchmark.
  kill_mid_run_leaves_nothing("micromm/fork", {}, [](pid_t agent) { return leftovers_of(agent).size() >= 3; });
}

TEST(CleanUp, KilledKernbenchLeavesNoProcess) {
  ScratchDir src;
  make_fake_kernel_tree(src.path);
  // A build that is still compiling when the group is killed.
  const std::filesystem::path compiling = src.path / "compiling";
  std::ofstream(src.path / "Makefile", std::ios::app)
      << "\nslow:\n\t@touch " << compiling.string() << "; sleep 30 & sleep 30; wait\n";
  ScratchDir work;
  kill_mid_run_leaves_nothing(
      "mmtests/kernbench",
      {"--param", "source=" + src.path.string(), "--param", "target=slow", "--param", "workdir=" + work.path.string()},
      [&](pid_t) { return std::filesystem::exists(compiling); });
  if (HasFatalFailure() || IsSkipped()) return;
  // A SIGKILLed agent cannot remove its build directory; the next run does.
  EXPECT_FALSE(std::filesystem::is_empty(work.path));
  auto b = make("mmtests/kernbench");
  const auto params = kb::resolve_params(*b, kb::Size::Quick, {{"source", src.path.string()},
                                                               {"workdir", work.path.string()}});
  b->prepare(params, {});
  b->finish();
  EXPECT_TRUE(std::filesystem::is_empty(work.path)) << "a stale build directory survived the next run";
}
