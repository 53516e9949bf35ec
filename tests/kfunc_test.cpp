// kfunc/*: parsing function_graph output, resolving a function to the symbol
// ftrace lists, the skip reasons on a tracefs without function_graph (fake
// tracefs trees in a temporary directory), the set-up restoring every
// setting it changed, and the agent reporting kfunc/finish_task_switch as
// skipped with a reason or measured with the declared classes.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "runner/catalogue.h"
#include "tracing/tracefs.h"
#include "support/scoped_env.h"
#include "support/test_paths.h"

namespace {

namespace fs = std::filesystem;
using namespace kbench::tracing;

// Lines as a 6.12 kernel's function_graph writes them (funcgraph-cpu and
// -duration on, -overhead marks: '+' > 10 us, '!' > 100 us, '#' > 1 ms).
constexpr const char* kTrace = R"(# tracer: function_graph
#
# CPU  DURATION                  FUNCTION CALLS
# |     |   |                     |   |   |   |
 1)   0.845 us    |  finish_task_switch.isra.0();
 1)   1.070 us    |  __x64_sys_getppid();
 1) + 12.345 us   |  finish_task_switch.isra.0();
 ------------------------------------------
 1)  kbench--1234  =>  kbench--1235 
 ------------------------------------------

 1) ! 150.222 us  |  finish_task_switch.isra.0();
 1) # 1234.567 us |  finish_task_switch.isra.0();
 0)   9.000 us    |  finish_task_switch.isra.0();
 1)               |  schedule() {
 1)   5.500 us    |  }
 1)   2.000 us    |  } /* pipe_read */
CPU:1 [LOST 12 EVENTS]
 1)   0.900 us    |  __x64_sys_getppid();
)";

TEST(KfuncTrace, LeafLineWithCpuColumn) {
  const auto call = parse_graph_line(" 1)   0.845 us    |  finish_task_switch.isra.0();");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->cpu, 1);
  EXPECT_EQ(call->function, "finish_task_switch.isra.0");
  EXPECT_DOUBLE_EQ(call->duration_ns, 845);
}

TEST(KfuncTrace, DelayMarkersAndUnits) {
  auto call = parse_graph_line(" 3) + 12.345 us   |  schedule();");
  ASSERT_TRUE(call);
  EXPECT_DOUBLE_EQ(call->duration_ns, 12345);
  EXPECT_EQ(call->cpu, 3);
  call = parse_graph_line(" 1) ! 150.222 us  |  f();");
  ASSERT_TRUE(call);
  EXPECT_DOUBLE_EQ(call->duration_ns, 150222);
  call = parse_graph_line(" 1) @ 2.5 ms |  f();");
  ASSERT_TRUE(call);
  EXPECT_DOUBLE_EQ(call->duration_ns, 2.5e6);
  // Seven digits of us: the kernel drops the fraction.
  call = parse_graph_line(" 12) $ 1234567 us |  f();");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->cpu, 12);
  EXPECT_DOUBLE_EQ(call->duration_ns, 1234567e3);
}

TEST(KfuncTrace, NoCpuColumnAndAbstimeAndProcColumns) {
  auto call = parse_graph_line("   0.845 us    |  finish_task_switch();");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->cpu, -1);
  EXPECT_EQ(call->function, "finish_task_switch");
  call = parse_graph_line("  358.123456 |   1)  kbench--1234  |   0.845 us    |  finish_task_switch.isra.0();");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->cpu, 1);
  EXPECT_DOUBLE_EQ(call->duration_ns, 845);
  EXPECT_EQ(call->function, "finish_task_switch.isra.0");
}

TEST(KfuncTrace, RetvalCommentIsNotPartOfTheName) {
  const auto call = parse_graph_line(" 1)   0.500 us    |  __x64_sys_getppid(); /* = 0x1 */");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->function, "__x64_sys_getppid");
}

TEST(KfuncTrace, HeadersMarkersAndOpeningLinesAreNoCalls) {
  for (const char* line : {"# tracer: function_graph", "# |     |   |                     |   |   |   |",
                           " ------------------------------------------",
                           " 1)  kbench--1234  =>  kbench--1235 ", " 1)               |  schedule() {",
                           "", "CPU:1 [LOST 12 EVENTS]", "##### CPU 1 buffer started ####"}) {
    EXPECT_FALSE(parse_graph_line(line)) << line;
  }
}

TEST(KfuncTrace, WholeTraceCountsCallsAndLostEvents) {
  const auto trace = parse_graph_trace(kTrace);
  EXPECT_EQ(trace.lost_events, 12u);
  std::vector<std::string> names;
  for (const auto& call : trace.calls) names.push_back(call.function);
  const std::vector<std::string> expected{"finish_task_switch.isra.0", "__x64_sys_getppid",
                                          "finish_task_switch.isra.0", "finish_task_switch.isra.0",
                                          "finish_task_switch.isra.0", "finish_task_switch.isra.0",
                                          "schedule",                  "pipe_read",
                                          "__x64_sys_getppid"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(trace.calls[5].cpu, 0);
  EXPECT_DOUBLE_EQ(trace.calls[4].duration_ns, 1234567);
  EXPECT_DOUBLE_EQ(trace.calls[6].duration_ns, 5500);  // the "}" closing schedule() {
  EXPECT_FALSE(trace.buffer_restarted);
  EXPECT_TRUE(parse_graph_trace("##### CPU 1 buffer started ####\n").buffer_restarted);
}

TEST(KfuncStats, OverrunAndDroppedEventsAreLost) {
  const char* stats =
      "entries: 40312\noverrun: 7\ncommit overrun: 0\nbytes: 3145728\noldest event ts:  1234.567890\n"
      "now ts:  1240.000000\ndropped events: 3\nread events: 0\n";
  EXPECT_EQ(parse_lost_from_stats(stats), 10u);
  EXPECT_EQ(parse_lost_from_stats("entries: 1\noverrun: 0\n"), 0u);
  EXPECT_FALSE(parse_lost_from_stats("nothing here\n"));
}

TEST(KfuncStats, BufferSizeAndCpumask) {
  EXPECT_EQ(parse_buffer_size_kb("1408\n"), 1408);
  EXPECT_EQ(parse_buffer_size_kb("7 (expanded: 1408)\n"), 1408);
  EXPECT_FALSE(parse_buffer_size_kb("X\n"));
  EXPECT_EQ(cpumask_of(0), "1");
  EXPECT_EQ(cpumask_of(5), "20");
  EXPECT_EQ(cpumask_of(31), "80000000");
  EXPECT_EQ(cpumask_of(33), "2,00000000");
}

constexpr const char* kFilterFunctions =
    "schedule\n"
    "finish_task_switch.isra.0\n"
    "finish_task_switch_extra\n"
    "pick_next.constprop.0\n"
    "pick_next.part.0\n"
    "update_curr.cold\n"
    "update_curr.isra.0\n"
    "ext4_sync_file [ext4]\n"
    "__x64_sys_getppid\n";

TEST(KfuncSymbol, ExactNameFirstElseTheOneSuffixedVariant) {
  const auto functions = parse_filter_functions(kFilterFunctions);
  EXPECT_EQ(functions.size(), 9u);
  EXPECT_EQ(functions[7], "ext4_sync_file");
  EXPECT_EQ(resolve_symbol(functions, "schedule"), "schedule");
  EXPECT_EQ(resolve_symbol(functions, "finish_task_switch"), "finish_task_switch.isra.0");
  EXPECT_EQ(resolve_symbol(functions, "finish_task_switch.isra.0"), "finish_task_switch.isra.0");
  EXPECT_EQ(resolve_symbol(functions, "update_curr"), "update_curr.isra.0");  // .cold is no entry point
  EXPECT_EQ(resolve_symbol(functions, "ext4_sync_file"), "ext4_sync_file");
  EXPECT_FALSE(resolve_symbol(functions, "finish_task"));  // a prefix is not a variant
  EXPECT_FALSE(resolve_symbol(functions, "no_such_function"));
}

TEST(KfuncSymbol, AmbiguousVariantsAreAnErrorNamingThem) {
  const auto functions = parse_filter_functions(kFilterFunctions);
  try {
    resolve_symbol(functions, "pick_next");
    FAIL() << "expected InputError";
  } catch (const kbench::InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("pick_next.constprop.0"), std::string::npos) << message;
    EXPECT_NE(message.find("pick_next.part.0"), std::string::npos) << message;
  }
}

// A tracefs-like directory of plain files in a temporary directory.
class FakeTracefs {
 public:
  FakeTracefs() {
    char pattern[] = "/tmp/kbench-fake-tracefs-XXXXXX";
    root_ = mkdtemp(pattern);
    // The sessions' restore journals go beside the fake tree, not to /tmp,
    // for as long as the tree exists.
    journal_dir_.emplace("KBENCH_TRACEFS_JOURNAL_DIR", root_.c_str());
  }
  ~FakeTracefs() { fs::remove_all(root_); }
  void put(const std::string& name, const std::string& text) const {
    fs::create_directories(fs::path(root_ / name).parent_path());
    std::ofstream(root_ / name) << text;
  }
  std::string get(const std::string& name) const {
    std::ifstream in(root_ / name);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Every file kfunc reads or writes, with function_graph offered.
  void populate() const {
    put("available_tracers", "function_graph function nop\n");
    put("available_filter_functions", kFilterFunctions);
    put("current_tracer", "nop\n");
    put("set_ftrace_filter", "#### all functions enabled ####\n");
    put("set_graph_function", "#### all functions enabled ####\n");
    put("max_graph_depth", "0\n");
    put("tracing_cpumask", "3\n");
    put("tracing_on", "1\n");
    put("buffer_size_kb", "7 (expanded: 1408)\n");
    put("per_cpu/cpu1/buffer_size_kb", "1408\n");
    put("per_cpu/cpu1/stats", "entries: 0\noverrun: 4\ndropped events: 0\n");
    put("per_cpu/cpu1/trace", "# tracer: nop\n");
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
  std::optional<kbench::testing::ScopedEnv> journal_dir_;
};

TEST(KfuncTracefs, NoFunctionGraphIsTheSkipReasonNamingTheTracers) {
  FakeTracefs fake;
  fake.put("available_tracers", "blk function nop\n");
  const auto reason = function_graph_unavailable(Tracefs(fake.root()));
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("tracefs offers tracers blk function nop"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("function_graph"), std::string::npos) << *reason;
}

TEST(KfuncTracefs, OtherSkipReasons) {
  FakeTracefs fake;
  EXPECT_NE(function_graph_unavailable(Tracefs(fake.root()))->find("no available_tracers"), std::string::npos);
  fake.populate();
  EXPECT_FALSE(function_graph_unavailable(Tracefs(fake.root())));
  fake.put("current_tracer", "function\n");
  EXPECT_NE(function_graph_unavailable(Tracefs(fake.root()))->find("current_tracer is function"),
            std::string::npos);
}

TEST(KfuncTracefs, SessionWritesItsSettingsAndRestoresEveryOne) {
  FakeTracefs fake;
  fake.populate();
  {
    FunctionGraphSession session(Tracefs(fake.root()), {{"finish_task_switch.isra.0", "__x64_sys_getppid"}, 1, 4096});
    EXPECT_EQ(fake.get("current_tracer"), "function_graph");
    EXPECT_EQ(fake.get("set_ftrace_filter"), "finish_task_switch.isra.0 __x64_sys_getppid");
    EXPECT_EQ(fake.get("set_graph_function"), "finish_task_switch.isra.0 __x64_sys_getppid");
    EXPECT_EQ(fake.get("max_graph_depth"), "1");
    EXPECT_EQ(fake.get("tracing_cpumask"), "2");
    EXPECT_EQ(fake.get("tracing_on"), "0");
    EXPECT_EQ(fake.get("per_cpu/cpu1/buffer_size_kb"), "4096");
    session.clear();
    EXPECT_EQ(fake.get("per_cpu/cpu1/trace"), "");
    fake.put("per_cpu/cpu1/stats", "entries: 10\noverrun: 6\ndropped events: 1\n");
    EXPECT_EQ(session.lost_since_clear(), 3u);  // counted from clear(): 6 + 1 - 4
    session.start();
    EXPECT_EQ(fake.get("tracing_on"), "1");
    session.stop();
    // The untraced baseline runs with the tracer removed, not just stopped.
    session.detach();
    EXPECT_EQ(fake.get("current_tracer"), "nop");
    session.attach();
    EXPECT_EQ(fake.get("current_tracer"), "function_graph");
    session.detach();  // restore() must not depend on the tracer being attached
  }
  EXPECT_EQ(fake.get("current_tracer"), "nop");
  EXPECT_EQ(fake.get("set_ftrace_filter"), "");  // empty: all functions again
  EXPECT_EQ(fake.get("set_graph_function"), "");
  EXPECT_EQ(fake.get("max_graph_depth"), "0");
  EXPECT_EQ(fake.get("tracing_cpumask"), "3");
  EXPECT_EQ(fake.get("tracing_on"), "1");
  EXPECT_EQ(fake.get("per_cpu/cpu1/buffer_size_kb"), "1408");
  // Expanded once, as any tracer start does, so that no CPU is left minimal.
  EXPECT_EQ(fake.get("buffer_size_kb"), "1408");
}

TEST(KfuncTracefs, FailedSetUpRestoresWhatItChanged) {
  FakeTracefs fake;
  fake.populate();
  fs::remove(fs::path(fake.root()) / "max_graph_depth");
  EXPECT_THROW(FunctionGraphSession(Tracefs(fake.root()), {{"schedule"}, 1, 0}), kbench::RunError);
  EXPECT_EQ(fake.get("tracing_on"), "1");
  EXPECT_EQ(fake.get("set_ftrace_filter"), "");
  EXPECT_EQ(fake.get("current_tracer"), "nop\n");  // never touched
}

TEST(KfuncTracefs, JournalOfAKilledProcessIsRestoredAndRemoved) {
  FakeTracefs fake;
  fake.populate();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Sets the tracer up and dies without restoring anything.
    FunctionGraphSession session(Tracefs(fake.root()), {{"schedule"}, 1, 0});
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(fake.get("current_tracer"), "function_graph");
  const std::string journal = fake.root() + "/kbench-tracefs-" + std::to_string(child) + ".journal";
  ASSERT_TRUE(fs::exists(journal));
  const auto restored = restore_abandoned_sessions();
  ASSERT_EQ(restored.size(), 1u);
  EXPECT_NE(restored[0].find("left by pid " + std::to_string(child)), std::string::npos) << restored[0];
  EXPECT_EQ(fake.get("current_tracer"), "nop");
  {
    // A live process's journal is left alone.
    FunctionGraphSession live(Tracefs(fake.root()), {{"schedule"}, 1, 0});
    EXPECT_TRUE(restore_abandoned_sessions().empty());
    EXPECT_TRUE(fs::exists(fake.root() + "/kbench-tracefs-" + std::to_string(getpid()) + ".journal"));
  }
  EXPECT_FALSE(fs::exists(journal));
  EXPECT_FALSE(fs::exists(fake.root() + "/kbench-tracefs-" + std::to_string(getpid()) + ".journal"));
  EXPECT_EQ(fake.get("current_tracer"), "nop");
  EXPECT_EQ(fake.get("max_graph_depth"), "0");
  EXPECT_EQ(fake.get("tracing_on"), "1");
}

// --- the agent ---------------------------------------------------------------

struct Outcome {
  int exit_status = -1;
  std::string out;
};

// The agent's stdout (stderr dropped) and exit status; `env` prefixes the
// command ("KBENCH_TRACEFS_ROOT=/tmp/x").
Outcome run_agent(const std::string& args, const std::string& env = "") {
  char out_path[] = "/tmp/kbench-kfunc-agent-XXXXXX";
  const int fd = mkstemp(out_path);
  if (fd >= 0) close(fd);
  const int status =
      std::system((env + " " + KBENCH_BINARY_DIR + "/kbench-agent " + args + " >" + out_path + " 2>/dev/null").c_str());
  Outcome outcome;
  outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(out_path);
  std::ostringstream text;
  text << in.rdbuf();
  outcome.out = text.str();
  unlink(out_path);
  return outcome;
}

std::vector<nlohmann::json> records_of(const std::string& text) {
  std::vector<nlohmann::json> records;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  return records;
}

const std::set<std::string> kDeclared{"time per call (ns)", "median per call (ns)", "time per call (ticks)",
                                      "tracer floor (ns)", "tracer overhead per switch (%)"};

TEST(KfuncAgent, FinishTaskSwitchIsSkippedWithAReasonOrMeasuredWithTheDeclaredClasses) {
  const auto outcome = run_agent(
      "run --benchmark kfunc/finish_task_switch --param calls=2000 --param floor_calls=500 --repeats 1 --warmups 0");
  ASSERT_EQ(outcome.exit_status, 0) << outcome.out;
  const auto records = records_of(outcome.out);
  ASSERT_FALSE(records.empty());
  std::set<std::string> declared;
  for (const auto& rc : records.front()["result_classes"]) {
    declared.insert(rc["name"].get<std::string>() + " (" + rc["unit"].get<std::string>() + ")");
    EXPECT_EQ(rc["better"], "lower");
  }
  EXPECT_EQ(declared, kDeclared);
  std::set<std::string> sampled;
  bool skipped = false;
  for (const auto& record : records) {
    if (record["type"] == "skipped") {
      skipped = true;
      EXPECT_FALSE(record["reason"].get<std::string>().empty());
    }
    if (record["type"] == "sample") {
      const auto& rc = record["result_class"];
      sampled.insert(rc["name"].get<std::string>() + " (" + rc["unit"].get<std::string>() + ")");
      EXPECT_GT(record["value"].get<double>(), 0) << record;
    }
  }
  if (!skipped) {
    EXPECT_EQ(sampled, kDeclared) << outcome.out;
  }
}

// A system call workload declares its overhead per system call, and is
// resolved and started (here up to the skip) like the ping-pong; a workload
// kfunc/ does not have is bad input.
TEST(KfuncAgent, TheSystemCallWorkloadsDeclareTheirOverheadPerSystemCall) {
  FakeTracefs fake;
  fake.put("available_tracers", "blk function nop\n");
  const auto outcome = run_agent("run --benchmark kfunc/__task_pid_nr_ns --param workload=getppid --repeats 1 "
                                 "--warmups 0",
                                 "KBENCH_TRACEFS_ROOT=" + fake.root());
  ASSERT_EQ(outcome.exit_status, 0) << outcome.out;
  const auto records = records_of(outcome.out);
  ASSERT_EQ(records.size(), 3u) << outcome.out;
  std::set<std::string> declared;
  for (const auto& rc : records.front()["result_classes"]) {
    declared.insert(rc["name"].get<std::string>() + " (" + rc["unit"].get<std::string>() + ")");
  }
  EXPECT_EQ(declared, (std::set<std::string>{"time per call (ns)", "median per call (ns)", "time per call (ticks)",
                                             "tracer floor (ns)", "tracer overhead per system call (%)"}));
  EXPECT_EQ(records[1]["type"], "skipped");
  EXPECT_EQ(run_agent("run --benchmark kfunc/__task_pid_nr_ns --param workload=getuid --repeats 1").exit_status, 2);
}

TEST(KfuncAgent, TracefsWithoutFunctionGraphIsSkippedNamingTheTracers) {
  FakeTracefs fake;
  fake.put("available_tracers", "blk function nop\n");
  const auto outcome = run_agent("run --benchmark kfunc/schedule --repeats 1 --warmups 0",
                                 "KBENCH_TRACEFS_ROOT=" + fake.root());
  ASSERT_EQ(outcome.exit_status, 0) << outcome.out;
  const auto records = records_of(outcome.out);
  ASSERT_EQ(records.size(), 3u) << outcome.out;
  EXPECT_EQ(records[1]["type"], "skipped");
  EXPECT_EQ(records[1]["reason"],
            "tracefs offers tracers blk function nop; kfunc needs function_graph (CONFIG_FUNCTION_GRAPH_TRACER)");
  EXPECT_EQ(records[2]["status"], "skipped");
}

TEST(KfuncAgent, AnyFunctionNameResolvesAndTheDefaultIsListed) {
  const auto listed = run_agent("list");
  ASSERT_EQ(listed.exit_status, 0);
  std::vector<std::string> kfuncs;
  const auto catalogue = nlohmann::json::parse(listed.out);
  for (const auto& entry : catalogue.at("benchmarks")) {
    const auto name = entry["name"].get<std::string>();
    if (name.rfind("kfunc/", 0) == 0) kfuncs.push_back(name);
  }
  EXPECT_EQ(kfuncs, std::vector<std::string>{"kfunc/finish_task_switch"});
  EXPECT_EQ(run_agent("run --benchmark 'kfunc/bad name' --repeats 1").exit_status, 2);
  EXPECT_EQ(run_agent("run --benchmark kfunc/ --repeats 1").exit_status, 2);
}

TEST(KfuncCatalogue, TheControllerResolvesAnyNameOfTheFamilyFromTheAgentsList) {
  const auto listed = run_agent("list");
  ASSERT_EQ(listed.exit_status, 0);
  const auto catalogue = kbench::runner::parse_catalogue(nlohmann::json::parse(listed.out));
  ASSERT_EQ(catalogue.families.count("kfunc/"), 1u);
  const auto entry = catalogue.find("kfunc/schedule");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->name, "kfunc/schedule");
  EXPECT_EQ(entry->result_classes.size(), kDeclared.size());
  EXPECT_EQ(entry->effective_params("quick", {{"calls", "500"}}).at("calls"), "500");
  EXPECT_EQ(catalogue.matching("kfunc/schedule"), std::vector<std::string>{"kfunc/schedule"});
  EXPECT_EQ(catalogue.matching("kfunc/*"), std::vector<std::string>{"kfunc/finish_task_switch"});
  EXPECT_FALSE(catalogue.find("kfunc/"));
  EXPECT_FALSE(catalogue.find("syscall/nosuch"));
}

}  // namespace
