// mmtests/sysbench-{cpu,mutex,thread} and sockperf/{echo-lat,packet-tp}-{tcp,udp}:
// each runs at a small size and returns finite, positive values for exactly
// its declared result classes, named as the seed report names them; bad
// parameters are InputError; a killed agent leaves no process behind.
// Nothing here asserts a timing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/benchmark.h"
#include "common/errors.h"
#include "support/process_group.h"
#include "support/test_paths.h"

namespace kb = kbench::bench;
using kbench::InputError;
using kbench::Params;
using kbench::SkipBenchmark;

namespace {

const std::vector<std::string> kSysbench = {"mmtests/sysbench-cpu", "mmtests/sysbench-mutex",
                                            "mmtests/sysbench-thread"};
const std::vector<std::string> kSock = {"sockperf/echo-lat-tcp", "sockperf/echo-lat-udp",
                                        "sockperf/packet-tp-tcp", "sockperf/packet-tp-udp"};

std::unique_ptr<kb::Benchmark> make(const std::string& name) {
  auto b = kb::Registry::instance().create(name);
  if (!b) ADD_FAILURE() << name << " is not registered";
  return b;
}

// The smallest useful size of each benchmark, so the suite stays short.
Params small_overrides(const std::string& name) {
  if (name == "mmtests/sysbench-cpu") return {{"threads", "1,2"}, {"time", "0.05"}};
  if (name == "mmtests/sysbench-mutex") return {{"threads", "1,2"}, {"mutex-locks", "200"}};
  if (name == "mmtests/sysbench-thread") return {{"threads", "1,2"}, {"time", "0.05"}, {"thread-yields", "50"}};
  return {{"time", "0.05"}, {"msg-sizes", "64B,1472B"}};
}

std::vector<kb::Measurement> run_one_repeat(const std::string& name, const Params& overrides, int cpu = 0,
                                            std::map<std::string, std::string>* notes_out = nullptr) {
  auto b = make(name);
  if (!b) return {};
  const Params params = kb::resolve_params(*b, kb::Size::Quick, overrides);
  const auto declared = b->result_classes(params);
  EXPECT_FALSE(declared.empty()) << name;
  kb::Placement where;
  where.cpu = cpu;
  std::vector<kb::Measurement> got;
  try {
    b->prepare(params, where);
    got = b->run_repeat(params, where);
    // A second repeat on the same prepared state must work too (the agent
    // runs warmups and repeats back to back).
    const auto again = b->run_repeat(params, where);
    EXPECT_EQ(again.size(), got.size()) << name;
  } catch (...) {
    b->finish();
    throw;
  }
  const auto notes = b->notes();
  EXPECT_TRUE(notes.count("placement")) << name << " does not report its placement";
  if (notes_out) *notes_out = notes;
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

int online_cpus() { return int(sysconf(_SC_NPROCESSORS_ONLN)); }

// ---------------------------------------------------------------------------

TEST(BenchSock, AllAreRegistered) {
  const auto names = kb::Registry::instance().names();
  for (const auto& name : kSysbench) EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  for (const auto& name : kSock) EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(BenchSock, SysbenchCpuReportsEventsPerSecondPerThreadCount) {
  const auto got = run_one_repeat("mmtests/sysbench-cpu", small_overrides("mmtests/sysbench-cpu"));
  EXPECT_EQ(labels(got), (std::vector<std::string>{"sysbenchcpu-1 (ops/second)", "sysbenchcpu-2 (ops/second)"}));
  for (const auto& m : got) EXPECT_EQ(m.result_class.better, kbench::Better::Higher);
}

TEST(BenchSock, SysbenchMutexReportsUsecPerThreadCount) {
  const auto got = run_one_repeat("mmtests/sysbench-mutex", small_overrides("mmtests/sysbench-mutex"));
  EXPECT_EQ(labels(got), (std::vector<std::string>{"sysbenchmutex-1 (usec)", "sysbenchmutex-2 (usec)"}));
  for (const auto& m : got) EXPECT_EQ(m.result_class.better, kbench::Better::Lower);
}

TEST(BenchSock, SysbenchThreadReportsUsecPerThreadCount) {
  const auto got = run_one_repeat("mmtests/sysbench-thread", small_overrides("mmtests/sysbench-thread"));
  EXPECT_EQ(labels(got), (std::vector<std::string>{"sysbenchthread-1 (usec)", "sysbenchthread-2 (usec)"}));
  for (const auto& m : got) EXPECT_EQ(m.result_class.better, kbench::Better::Lower);
}

TEST(BenchSock, SysbenchPinnedToAgentCpuRuns) {
  for (const auto& name : kSysbench) {
    Params overrides = small_overrides(name);
    overrides["pin"] = "agent-cpu";
    std::map<std::string, std::string> notes;
    run_one_repeat(name, overrides, 0, &notes);
    EXPECT_NE(notes["placement"].find("cpu0"), std::string::npos) << name << ": " << notes["placement"];
  }
}

TEST(BenchSock, SysbenchAutoLadderGoesFromOneToTwiceTheCpus) {
  for (const auto& name : kSysbench) {
    auto b = make(name);
    ASSERT_TRUE(b);
    const auto classes = b->result_classes(kb::resolve_params(*b, kb::Size::Default, {}));
    ASSERT_GE(classes.size(), 1u);
    const std::string prefix = classes.front().name.substr(0, classes.front().name.find('-') + 1);
    EXPECT_EQ(classes.front().name, prefix + "1") << name;
    EXPECT_EQ(classes.back().name, prefix + std::to_string(2 * online_cpus())) << name;
  }
}

TEST(BenchSock, SysbenchRejectsBadParameters) {
  const std::vector<std::pair<std::string, Params>> bad = {
      {"mmtests/sysbench-cpu", {{"threads", "0"}}},
      {"mmtests/sysbench-cpu", {{"threads", "1,x"}}},
      {"mmtests/sysbench-cpu", {{"threads", ""}}},
      {"mmtests/sysbench-cpu", {{"cpu-max-prime", "2"}}},
      {"mmtests/sysbench-cpu", {{"time", "0"}}},
      {"mmtests/sysbench-cpu", {{"pin", "sideways"}}},
      {"mmtests/sysbench-mutex", {{"mutex-num", "0"}}},
      {"mmtests/sysbench-mutex", {{"mutex-locks", "-5"}}},
      {"mmtests/sysbench-mutex", {{"mutex-loops", "many"}}},
      {"mmtests/sysbench-thread", {{"thread-yields", "0"}}},
      {"mmtests/sysbench-thread", {{"thread-locks", "0"}}},
  };
  for (const auto& [name, overrides] : bad) {
    auto b = make(name);
    ASSERT_TRUE(b);
    // The shared validation in resolve_params refuses each value before
    // the benchmark sees it.
    EXPECT_THROW(
        {
          const Params params = kb::resolve_params(*b, kb::Size::Quick, overrides);
          b->result_classes(params);
          b->prepare(params, {});
        },
        InputError)
        << name << " " << overrides.begin()->first << "=" << overrides.begin()->second;
    b->finish();
  }
}

TEST(BenchSock, PingPongReportsLatencyPerMessageSize) {
  for (const std::string name : {"sockperf/echo-lat-tcp", "sockperf/echo-lat-udp"}) {
    const auto got = run_one_repeat(name, small_overrides(name));
    EXPECT_EQ(labels(got), (std::vector<std::string>{
                               "ping-pong m:64B t:0.05s, avg_latency (usec)",
                               "ping-pong m:64B t:0.05s, latency_p99 (usec)",
                               "ping-pong m:1472B t:0.05s, avg_latency (usec)",
                               "ping-pong m:1472B t:0.05s, latency_p99 (usec)",
                           }))
        << name;
    for (const auto& m : got) EXPECT_EQ(m.result_class.better, kbench::Better::Lower);
  }
}

TEST(BenchSock, ThroughputReportsRateAndMbpsPerMessageSize) {
  for (const std::string name : {"sockperf/packet-tp-tcp", "sockperf/packet-tp-udp"}) {
    const auto got = run_one_repeat(name, small_overrides(name));
    EXPECT_EQ(labels(got), (std::vector<std::string>{
                               "throughput m:64B t:0.05s, msg_rate (msg/sec)",
                               "throughput m:64B t:0.05s, throughput_mbps (Mbps)",
                               "throughput m:1472B t:0.05s, msg_rate (msg/sec)",
                               "throughput m:1472B t:0.05s, throughput_mbps (Mbps)",
                           }))
        << name;
    ASSERT_EQ(got.size(), 4u);
    // Mbps is the message rate times the message size in sockperf's 2^20-bit units.
    EXPECT_NEAR(got[1].value, got[0].value * 64 * 8 / 1048576.0, got[1].value * 1e-9) << name;
    EXPECT_NEAR(got[3].value, got[2].value * 1472 * 8 / 1048576.0, got[3].value * 1e-9) << name;
  }
}

TEST(BenchSock, SockDefaultSizesAreTheFourOfTheIssue) {
  auto b = make("sockperf/packet-tp-udp");
  ASSERT_TRUE(b);
  const auto classes = b->result_classes(kb::resolve_params(*b, kb::Size::Default, {}));
  ASSERT_EQ(classes.size(), 8u);
  EXPECT_EQ(classes[0].name, "throughput m:64B t:1s, msg_rate");
  EXPECT_EQ(classes[2].name, "throughput m:256B t:1s, msg_rate");
  EXPECT_EQ(classes[4].name, "throughput m:1024B t:1s, msg_rate");
  EXPECT_EQ(classes[6].name, "throughput m:1472B t:1s, msg_rate");
}

TEST(BenchSock, SockCrossAndFreePlacementsRunOrSkip) {
  for (const std::string placement : {"cross", "free"}) {
    Params overrides = small_overrides("sockperf/echo-lat-udp");
    overrides["placement"] = placement;
    overrides["msg-sizes"] = "64B";
    std::map<std::string, std::string> notes;
    if (placement == "cross" && online_cpus() < 2) {
      EXPECT_THROW(run_one_repeat("sockperf/echo-lat-udp", overrides, 0), SkipBenchmark);
      continue;
    }
    run_one_repeat("sockperf/echo-lat-udp", overrides, 0, &notes);
    if (placement == "cross") {
      EXPECT_NE(notes["placement"].find("client cpu0, server cpu1"), std::string::npos)
          << notes["placement"];
    } else {
      EXPECT_NE(notes["placement"].find("unpinned"), std::string::npos) << notes["placement"];
    }
  }
}

TEST(BenchSock, SockServerRunsAsChildProcessOrThread) {
  for (const std::string name : {"sockperf/echo-lat-tcp", "sockperf/packet-tp-udp"}) {
    std::map<std::string, std::string> notes;
    run_one_repeat(name, small_overrides(name), 0, &notes);
    EXPECT_NE(notes["placement"].find("forked child process"), std::string::npos) << notes["placement"];
    Params overrides = small_overrides(name);
    overrides["server"] = "thread";
    run_one_repeat(name, overrides, 0, &notes);
    EXPECT_NE(notes["placement"].find("thread of the agent"), std::string::npos) << notes["placement"];
  }
}

TEST(BenchSock, SockRejectsBadParameters) {
  const std::vector<std::pair<std::string, Params>> bad = {
      {"sockperf/echo-lat-tcp", {{"msg-sizes", "1B"}}},
      {"sockperf/echo-lat-tcp", {{"msg-sizes", "lots"}}},
      {"sockperf/echo-lat-tcp", {{"msg-sizes", ""}}},
      {"sockperf/echo-lat-udp", {{"msg-sizes", "64B,70000B"}}},
      {"sockperf/packet-tp-tcp", {{"time", "-1"}}},
      {"sockperf/packet-tp-udp", {{"placement", "elsewhere"}}},
      {"sockperf/echo-lat-udp", {{"server", "fork"}}},
  };
  for (const auto& [name, overrides] : bad) {
    auto b = make(name);
    ASSERT_TRUE(b);
    // The shared validation in resolve_params refuses each value before
    // the benchmark sees it.
    EXPECT_THROW(
        {
          const Params params = kb::resolve_params(*b, kb::Size::Quick, overrides);
          b->result_classes(params);
          b->prepare(params, {});
        },
        InputError)
        << name << " " << overrides.begin()->first << "=" << overrides.begin()->second;
    b->finish();
  }
}

// finish() closes every socket: the process has as many fds after as before.
TEST(BenchSock, SockFinishClosesItsSockets) {
  const auto count_fds = [] {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  for (const auto& name : kSock) {
    const std::size_t before = count_fds();
    run_one_repeat(name, small_overrides(name));
    EXPECT_EQ(count_fds(), before) << name;
    auto b = make(name);
    ASSERT_TRUE(b);
    const Params params = kb::resolve_params(*b, kb::Size::Quick, small_overrides(name));
    kb::Placement nowhere;
    nowhere.cpu = 0;
    b->prepare(params, nowhere);
    EXPECT_GT(count_fds(), before) << name << " holds its sockets between prepare and finish";
    b->finish();
    EXPECT_EQ(count_fds(), before) << name;
  }
}

// ---------------------------------------------------------------------------
// Clean-up when the controller SIGKILLs the agent's process group.

std::string agent_path() { return std::string(KBENCH_BINARY_DIR) + "/kbench-agent"; }

std::string capture(const std::string& command) {
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    pclose(pipe);
  }
  return out;
}

// Live processes of the group `pid` leads or whose parent is `pid`, but for
// `pid` itself, as "PID (comm)".
std::vector<std::string> processes_of(pid_t pid) {
  std::vector<std::string> found;
  for (const auto& process : kbench::testing::live_processes_of(pid)) {
    if (process.pid != pid) found.push_back(process.stat);
  }
  return found;
}

// The threads of the processes of processes_of(pid) (/proc/PID/task),
// summed: the agent's contained child alone has 1; a benchmark running in
// it adds its threads or its own child process.
std::size_t threads_under(pid_t pid) {
  std::size_t threads = 0;
  for (const std::string& process : processes_of(pid)) {
    const std::string tasks = "/proc/" + process.substr(0, process.find(' ')) + "/task";
    if (DIR* dir = opendir(tasks.c_str())) {
      while (dirent* entry = readdir(dir)) threads += entry->d_name[0] != '.';
      closedir(dir);
    }
  }
  return threads;
}

// `forks`: the benchmark runs a child process, which must exist at the kill.
void kill_mid_run_leaves_nothing(const std::string& benchmark, const std::vector<std::string>& params,
                                 bool forks) {
  if (access(agent_path().c_str(), X_OK) != 0) FAIL() << "kbench-agent not built: " << agent_path();
  const std::string list = capture(agent_path() + " list 2>/dev/null");
  // A renamed benchmark must fail this test, not silently skip it.
  if (list.find(benchmark) == std::string::npos) FAIL() << "kbench-agent does not list " << benchmark;

  std::vector<std::string> args = {agent_path(), "run", "--benchmark", benchmark, "--size", "default",
                                   "--warmups", "0", "--repeats", "50", "--cpu", "0"};
  for (const auto& p : params) {
    args.push_back("--param");
    args.push_back(p);
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setpgid(0, 0);
    if (!freopen("/dev/null", "w", stdout)) _exit(126);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(child, child);  // also from here, so the group exists before we kill it
  // Killed once the benchmark runs: the agent's contained child has threads
  // or a child process of its own besides its main thread. Looked for rather
  // than waited a fixed time: an agent under a sanitizer on a loaded
  // machine can take seconds to get there. The minute is only a bound for an
  // agent that never does.
  bool running = false;
  int early_status = 0;
  for (int look = 0; look < 600 && !running; ++look) {
    if (waitpid(child, &early_status, WNOHANG) != 0) {
      FAIL() << "agent exited before it could be killed, status " << early_status;
    }
    running = threads_under(child) > 1;
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(running) << benchmark << " did not start within a minute";
  if (forks) {
    EXPECT_GE(processes_of(child).size(), 2u) << benchmark << " runs no process of its own to leave behind";
  }
  ASSERT_EQ(kill(-child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "agent status " << status;
  std::vector<std::string> left;
  for (int i = 0; i < 50; ++i) {
    left = processes_of(child);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
}

TEST(BenchSockCleanup, KilledPingPongAgentLeavesNoProcess) {
  kill_mid_run_leaves_nothing("sockperf/echo-lat-tcp", {"time=5"}, true);
}

TEST(BenchSockCleanup, KilledSysbenchThreadAgentLeavesNoProcess) {
  kill_mid_run_leaves_nothing("mmtests/sysbench-thread", {"time=5"}, false);
}

}  // namespace
