// The agent binary as the controller sees it: its JSON, its records, its exit
// statuses and what it writes where.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/records.h"
#include "support/test_paths.h"
#include "timing/cycle_counter.h"

namespace {

const std::string kAgent = KBENCH_BINARY_DIR + "/kbench-agent";

struct Outcome {
  int exit_status = -1;
  std::string out;
  std::string err;
};

Outcome run_agent(const std::string& args) {
  char err_path[] = "/tmp/kbench-agent-test-XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  const std::string command = kAgent + " " + args + " 2>" + err_path;
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  std::size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.out.append(buffer, got);
  const int status = pclose(pipe);
  outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::ostringstream text;
  text << err.rdbuf();
  outcome.err = text.str();
  unlink(err_path);
  return outcome;
}

std::vector<nlohmann::json> lines_of(const std::string& text) {
  std::vector<nlohmann::json> records;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) records.push_back(nlohmann::json::parse(line));
  return records;
}

std::size_t line_count(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST(Agent, IsStaticallyLinked) {
  FILE* pipe = popen(("file -L " + kAgent).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[1024] = {};
  const std::size_t got = fread(buffer, 1, sizeof buffer - 1, pipe);
  pclose(pipe);
  const std::string description(buffer, got);
  EXPECT_NE(description.find("statically linked"), std::string::npos) << description;
}

TEST(Agent, ListIsTheCatalogueWithResultClasses) {
  const auto outcome = run_agent("list");
  ASSERT_EQ(outcome.exit_status, 0) << outcome.err;
  const auto catalogue = nlohmann::json::parse(outcome.out);
  const std::set<std::string> latency = {"mean (ns)", "median (ns)", "p99 (ns)", "p99.9 (ns)"};
  const std::set<std::string> perf = {"basic (ops/sec)", "getpgid (ops/sec)", "fork (ops/sec)",
                                      "execve (ops/sec)"};
  std::set<std::string> seen;
  for (const auto& entry : catalogue.at("benchmarks")) {
    const std::string name = entry.at("name");
    std::set<std::string> labels;
    for (const auto& rc : entry.at("result_classes")) {
      labels.insert(rc.at("label").get<std::string>());
      EXPECT_EQ(rc.at("label"), rc.at("name").get<std::string>() + " (" +
                                    rc.at("unit").get<std::string>() + ")");
      EXPECT_TRUE(rc.at("better") == "higher" || rc.at("better") == "lower");
      if (name.rfind("syscall/", 0) == 0) {
        EXPECT_EQ(rc.at("better"), "lower");
      }
      if (name == "perf/syscall") {
        EXPECT_EQ(rc.at("better"), "higher");
      }
    }
    for (const auto& param : entry.at("params")) {
      EXPECT_TRUE(param.at("name").is_string());
      EXPECT_TRUE(param.at("default").is_string());
      EXPECT_TRUE(param.at("quick").is_string());
      EXPECT_TRUE(param.at("help").is_string());
    }
    EXPECT_TRUE(entry.at("description").is_string());
    if (name == "syscall/getpid" || name == "syscall/getppid" || name == "syscall/invalid") {
      EXPECT_EQ(labels, latency) << name;
      seen.insert(name);
    }
    if (name == "perf/syscall") {
      EXPECT_EQ(labels, perf);
      seen.insert(name);
    }
  }
  EXPECT_EQ(seen.size(), 4u);  // the three syscall/* and perf/syscall
}

TEST(Agent, FingerprintIsOneRecordWithTheKeys) {
  const auto outcome = run_agent("fingerprint");
  ASSERT_EQ(outcome.exit_status, 0) << outcome.err;
  ASSERT_EQ(line_count(outcome.out), 1u);
  const auto record = nlohmann::json::parse(outcome.out);
  EXPECT_EQ(record.at("type"), "fingerprint");
  const auto& data = record.at("data");
  for (const char* key : {"hostname", "arch", "cpu_model", "cpu_count", "memory_kib", "memory_gib",
                          "product_name", "kernel_release", "kernel_version", "cmdline",
                          "kernel_config_sha256", "kernel_config_gz_sha256", "mitigations",
                          "clocksource", "governor", "smt", "aslr", "thp", "loadavg", "timer"}) {
    EXPECT_TRUE(data.contains(key)) << key;
  }
  ASSERT_TRUE(data.at("timer").is_object());
  EXPECT_GT(data.at("timer").at("ticks_per_second").get<double>(), 0);
  // The agent runs on this CPU: it reads the counter as this process does.
  EXPECT_EQ(data.at("timer").at("begin_read"), kbench::timing::counter::kBeginSequence);
  EXPECT_EQ(data.at("timer").at("end_read"), kbench::timing::counter::end_sequence());
}

TEST(Agent, RunWritesSchemaValidRecords) {
  const auto outcome =
      run_agent("run --benchmark syscall/getppid --param calls=20000 --repeats 2 --warmups 1");
  ASSERT_EQ(outcome.exit_status, 0) << outcome.err;
  const auto records = lines_of(outcome.out);
  ASSERT_GE(records.size(), 3u);
  EXPECT_EQ(records.front().at("type"), "benchmark");
  EXPECT_EQ(records.front().at("params").at("calls"), "20000");
  EXPECT_EQ(records.front().at("warmups"), 1);
  EXPECT_EQ(records.front().at("repeats"), 2);
  EXPECT_EQ(records.back().at("type"), "end");
  EXPECT_EQ(records.back().at("status"), "ok");

  const std::set<std::string> declared = {"mean (ns)", "median (ns)", "p99 (ns)", "p99.9 (ns)"};
  std::vector<std::set<std::string>> per_repeat(2);
  std::vector<int> repeat_ends;
  bool saw_overhead = false, saw_in_call = false;
  std::string subtracted, fallback_reason;
  for (const auto& record : records) {
    EXPECT_EQ(record.at("benchmark"), "syscall/getppid");
    const std::string type = record.at("type");
    if (type == "sample") {
      const auto sample = kbench::records::sample_from_json(record);
      ASSERT_TRUE(sample.repeat == 0 || sample.repeat == 1) << record.dump();
      EXPECT_TRUE(std::isfinite(sample.value) && sample.value > 0) << record.dump();
      EXPECT_EQ(sample.result_class.better, kbench::Better::Lower);
      // Samples of a repeat come before its repeat_end.
      EXPECT_EQ(repeat_ends.size(), std::size_t(sample.repeat));
      EXPECT_TRUE(per_repeat[sample.repeat].insert(sample.result_class.label()).second)
          << "duplicate " << record.dump();
    } else if (type == "repeat_end") {
      repeat_ends.push_back(record.at("repeat").get<int>());
      EXPECT_GE(record.at("seconds").get<double>(), 0);
      EXPECT_GE(record.at("involuntary_switches").get<long>(), 0);
    } else if (type == "info") {
      EXPECT_TRUE(record.at("key").is_string());
      saw_overhead |= record.at("key") == "timer_overhead_ticks";
      if (record.at("key") == "timer_cost_in_call_ticks") {
        // What is subtracted: the bracket's measured cost inside the call loop.
        saw_in_call = true;
        EXPECT_GE(std::stod(record.at("value").get<std::string>()), 0) << record.dump();
      }
      // Which cost is subtracted depends on how disturbed the calibration was
      // (timing_test covers the choice); the record must name one, and a
      // fallback must say why.
      if (record.at("key") == "timer_cost_subtracted") subtracted = record.at("value").get<std::string>();
      if (record.at("key") == "timer_cost_fallback") fallback_reason = record.at("value").get<std::string>();
    } else {
      EXPECT_TRUE(type == "benchmark" || type == "end") << record.dump();
    }
  }
  EXPECT_EQ(repeat_ends, (std::vector<int>{0, 1}));
  EXPECT_EQ(per_repeat[0], declared);
  EXPECT_EQ(per_repeat[1], declared);
  EXPECT_TRUE(saw_overhead);
  EXPECT_TRUE(saw_in_call);
  if (subtracted == "in_call") {
    EXPECT_EQ(fallback_reason, "");
  } else {
    EXPECT_EQ(subtracted, "empty_bracket");
    EXPECT_NE(fallback_reason, "");
  }
}

TEST(Agent, InvalidSyscallRuns) {
  const auto outcome = run_agent("run --benchmark syscall/invalid --param calls=1000 --repeats 1 --warmups 0");
  ASSERT_EQ(outcome.exit_status, 0) << outcome.err;
  EXPECT_EQ(lines_of(outcome.out).back().at("status"), "ok");
}

TEST(Agent, PerfSyscallReportsAllFourClasses) {
  const auto outcome = run_agent(
      "run --benchmark perf/syscall --param loops=1000 --param fork_loops=5 "
      "--param execve_loops=5 --repeats 1 --warmups 0");
  ASSERT_EQ(outcome.exit_status, 0) << outcome.err;
  std::set<std::string> labels;
  std::string program;
  for (const auto& record : lines_of(outcome.out)) {
    if (record.at("type") == "sample") {
      const auto sample = kbench::records::sample_from_json(record);
      EXPECT_GT(sample.value, 0);
      labels.insert(sample.result_class.label());
    }
    if (record.at("type") == "info" && record.at("key") == "execve_program") program = record.at("value");
  }
  EXPECT_EQ(labels, (std::set<std::string>{"basic (ops/sec)", "getpgid (ops/sec)", "fork (ops/sec)",
                                           "execve (ops/sec)"}));
  // The build puts the helper next to the agent.
  EXPECT_EQ(program, KBENCH_BINARY_DIR + "/kbench-exec-helper");
}

TEST(Agent, MissingHelperParameterIsBadInput) {
  const auto outcome = run_agent("run --benchmark perf/syscall --param helper=/nonexistent/x --repeats 1");
  EXPECT_EQ(outcome.exit_status, 2);
  EXPECT_EQ(outcome.out, "");
  EXPECT_NE(outcome.err.find("/nonexistent/x"), std::string::npos) << outcome.err;
}

struct BadInput {
  std::string label;  // the ctest name's suffix: gtest would otherwise print the struct's bytes
  std::string args;
  std::string named;  // the part of the input the message must name
};

class AgentBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(AgentBadInput, ExitsTwoWithOneLineOnStderrAndNothingOnStdout) {
  const auto outcome = run_agent(GetParam().args);
  EXPECT_EQ(outcome.exit_status, 2);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(line_count(outcome.err), 1u) << outcome.err;
  EXPECT_NE(outcome.err.find(GetParam().named), std::string::npos) << outcome.err;
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, AgentBadInput,
    ::testing::Values(BadInput{"UnknownBenchmark", "run --benchmark no/such --repeats 1", "no/such"},
                      BadInput{"ParamWithoutValue", "run --benchmark syscall/getpid --param calls --repeats 1", "calls"},
                      BadInput{"UnknownParam", "run --benchmark syscall/getpid --param nokey=1 --repeats 1", "nokey"},
                      BadInput{"NonNumericParam", "run --benchmark syscall/getpid --param calls=abc --repeats 1", "abc"},
                      BadInput{"ParamOutOfRange", "run --benchmark syscall/getpid --param calls=0 --repeats 1", "'calls' = '0'"},
                      BadInput{"UnknownSize", "run --benchmark syscall/getpid --size huge", "huge"},
                      BadInput{"CpuOutOfRange", "run --benchmark syscall/getpid --cpu 99999", "99999"},
                      BadInput{"CpuNotANumber", "run --benchmark syscall/getpid --cpu one", "one"},
                      BadInput{"ZeroRepeats", "run --benchmark syscall/getpid --repeats 0", "repeats"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.label; });

TEST(Agent, UnknownBenchmarkListsKnownNames) {
  const auto outcome = run_agent("run --benchmark no/such");
  EXPECT_NE(outcome.err.find("syscall/getpid"), std::string::npos) << outcome.err;
}

TEST(Agent, HelpHasExamplesForEverySubcommand) {
  for (const char* sub : {"list", "fingerprint", "run"}) {
    const auto outcome = run_agent(std::string(sub) + " --help");
    EXPECT_EQ(outcome.exit_status, 0) << sub;
    EXPECT_NE(outcome.out.find("kbench-agent " + std::string(sub)), std::string::npos) << sub;
  }
}
