// `--kernel-profile` from the agent to the controller: the kernel_profile
// record and its checks, the harness sampling only the measured repeats of a
// benchmark that makes system calls, and the run stream handing the profile
// on once, after the last repeat.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "benchmarks/benchmark.h"
#include "benchmarks/harness.h"
#include "common/errors.h"
#include "analysis/kernel_profile.h"
#include "common/records.h"
#include "runner/run_stream.h"
#include "support/error_text.h"

namespace {

using nlohmann::json;
namespace records = kbench::records;
namespace bench = kbench::bench;
namespace runner = kbench::runner;

const kbench::ResultClass kCalls{"calls", "ops/sec", kbench::Better::Higher};

records::KernelProfile profile_record() {
  records::KernelProfile profile;
  profile.benchmark = "test/getppid";
  profile.period_ns = 250000;
  profile.samples = 10;
  profile.unresolved = 1;
  profile.unlisted = 2;
  profile.functions = {{"__task_pid_nr_ns", 4}, {"do_syscall_64", 3}};
  return profile;
}

std::string bad_record_message(const json& record) {
  return kbench::testing::error_of<records::BadRecord>([&] { records::record_from_json(record); }, "(accepted)");
}

TEST(KernelProfileRecord, RoundTrips) {
  const auto back = records::record_from_json(json::parse(records::to_json(profile_record()).dump()));
  const auto* profile = std::get_if<records::KernelProfile>(&back);
  ASSERT_NE(profile, nullptr);
  EXPECT_EQ(records::type_of(back), "kernel_profile");
  EXPECT_EQ(profile->functions, profile_record().functions);
  EXPECT_EQ(profile->samples, 10u);
  EXPECT_EQ(profile->unlisted, 2u);
  EXPECT_FALSE(profile->unavailable);

  records::KernelProfile unavailable;
  unavailable.benchmark = "test/getppid";
  unavailable.unavailable = "perf_event_open refused";
  const auto reason = records::record_from_json(records::to_json(unavailable));
  EXPECT_EQ(std::get<records::KernelProfile>(reason).unavailable, "perf_event_open refused");
}

TEST(KernelProfileRecord, CountsMustAddUp) {
  auto text = records::to_json(profile_record());
  text["samples"] = 11;
  EXPECT_EQ(bad_record_message(text),
            "'kernel_profile' record: field 'samples': expected the sum of the functions' counts, unresolved and "
            "unlisted");
  text = records::to_json(profile_record());
  text["functions"]["bad\nname"] = 1;
  text["samples"] = 11;
  EXPECT_EQ(bad_record_message(text),
            "'kernel_profile' record: field 'functions': expected an object of function names to sample counts "
            "above 0");
}

// Each repeat makes system calls for a while: what the sampler should see.
class GetppidBenchmark : public bench::Benchmark {
 public:
  std::string name() const override { return "test/getppid"; }
  std::string description() const override { return "getppid loop"; }
  std::vector<bench::ParamSpec> params() const override { return {}; }
  std::vector<kbench::ResultClass> result_classes(const kbench::Params&) const override { return {kCalls}; }
  void prepare(const kbench::Params&, const bench::Placement&) override {}
  std::vector<bench::Measurement> run_repeat(const kbench::Params&, const bench::Placement&) override {
    constexpr int kCallsPerRepeat = 100000;
    for (int i = 0; i < kCallsPerRepeat; ++i) syscall(SYS_getppid);
    return {{kCalls, double(kCallsPerRepeat)}};
  }
};

std::vector<json> run_harness(bool kernel_profile) {
  GetppidBenchmark benchmark;
  bench::RunSettings settings;
  settings.size = "quick";
  settings.warmups = 1;
  settings.repeats = 2;
  settings.kernel_profile = kernel_profile;
  std::vector<json> lines;
  const int status = bench::run_benchmark(benchmark, "test/getppid", {}, settings,
                                          [&](const records::Record& r) { lines.push_back(records::to_json(r)); });
  EXPECT_EQ(status, kbench::kExitOk);
  return lines;
}

runner::ExpectedRun expected_run() { return {"test/getppid", {}, "quick", 1, 2, {kCalls}}; }

TEST(KernelProfileHarness, NoProfileUnlessAsked) {
  for (const auto& line : run_harness(false)) EXPECT_NE(line.at("type"), "kernel_profile");
}

TEST(KernelProfileHarness, TheControllerReceivesTheRepeatsProfile) {
  const auto lines = run_harness(true);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2].at("type"), "kernel_profile") << "the profile comes last before the end";

  std::optional<records::KernelProfile> kept;
  runner::RunStream stream(expected_run(), [](int, const std::vector<records::Sample>&) {},
                           [&](const records::KernelProfile& profile) { kept = profile; });
  for (const auto& line : lines) stream.on_record(json::parse(line.dump()));
  stream.check_complete();
  ASSERT_FALSE(stream.fault()) << *stream.fault();
  ASSERT_TRUE(kept);
  if (kept->unavailable) GTEST_SKIP() << "profile unavailable: " << *kept->unavailable;
  // 200000 getppid calls take tens of milliseconds of kernel time at least:
  // a hundred 250 us ticks or more, nearly all in getppid's path.
  EXPECT_GT(kept->samples, 20u);
  EXPECT_EQ(kept->period_ns, 250000u);
  EXPECT_GT(kept->functions.size(), 0u);
}

TEST(KernelProfileStream, OneProfileAfterTheLastRepeat) {
  const auto feed_repeat = [](runner::RunStream& stream, int repeat) {
    stream.on_record(records::to_json(records::Sample{"test/getppid", kCalls, repeat, 1}));
    stream.on_record(records::to_json(records::RepeatEnd{"test/getppid", repeat, 0.1, 0}));
  };
  records::BenchmarkStart start;
  start.benchmark = "test/getppid";
  start.size = "quick";
  start.warmups = 1;
  start.repeats = 2;
  start.result_classes = {kCalls};
  auto profile = profile_record();
  profile.benchmark = "test/getppid";

  runner::RunStream early(expected_run(), [](int, const std::vector<records::Sample>&) {});
  early.on_record(records::to_json(start));
  feed_repeat(early, 0);
  early.on_record(records::to_json(profile));
  EXPECT_EQ(early.fault(), "agent wrote a 'kernel_profile' record after 1 of 2 repeats");

  runner::RunStream twice(expected_run(), [](int, const std::vector<records::Sample>&) {});
  twice.on_record(records::to_json(start));
  feed_repeat(twice, 0);
  feed_repeat(twice, 1);
  twice.on_record(records::to_json(profile));
  EXPECT_FALSE(twice.fault());
  twice.on_record(records::to_json(profile));
  EXPECT_EQ(twice.fault(), "agent wrote a second 'kernel_profile' record");
}

kbench::store::StoredKernelProfile store_profile(std::int64_t session, std::map<std::string, std::uint64_t> functions) {
  kbench::store::StoredKernelProfile stored;
  stored.session = session;
  stored.benchmark = {"test/getppid", {}};
  stored.profile.benchmark = "test/getppid";
  stored.profile.period_ns = 250000;
  for (const auto& [name, count] : functions) stored.profile.samples += count;
  stored.profile.functions = std::move(functions);
  return stored;
}

// A delay planted in one function: B spends as much again in it, so its
// share grows most and it comes out on top, though other functions have
// more samples; the others' shares shrink.
TEST(KernelProfileShifts, APlantedDelayComesOutOnTop) {
  namespace analysis = kbench::analysis;
  const auto a = analysis::sum_profiles({store_profile(1, {{"entry_SYSCALL_64", 500}, {"__task_pid_nr_ns", 100},
                                                           {"do_syscall_64", 400}}),
                                         store_profile(2, {{"entry_SYSCALL_64", 500}, {"__task_pid_nr_ns", 100},
                                                           {"do_syscall_64", 400}})});
  EXPECT_EQ(a.sessions, 2);
  EXPECT_EQ(a.samples, 2000u);
  const auto b = analysis::sum_profiles({store_profile(3, {{"entry_SYSCALL_64", 500}, {"__task_pid_nr_ns", 600},
                                                           {"do_syscall_64", 400}, {"new_fn", 1}})});
  const auto shifts = analysis::function_shifts(a, b);
  ASSERT_EQ(shifts.size(), 4u);
  EXPECT_EQ(shifts[0].function, "__task_pid_nr_ns");
  EXPECT_EQ(shifts[0].samples_a, 200u);
  EXPECT_EQ(shifts[0].samples_b, 600u);
  EXPECT_DOUBLE_EQ(shifts[0].share_a, 0.1);
  EXPECT_NEAR(shifts[0].share_b, 600.0 / 1501, 1e-12);
  EXPECT_LT(shifts[1].change(), 0);
  EXPECT_EQ(shifts[3].function, "new_fn");
  EXPECT_EQ(shifts[3].samples_a, 0u);
}

// The function that lost the most share changed most, but the extra time
// went to the one that gained most; only entry_SYSCALL_64 lost share.
TEST(KernelProfileShifts, TopMovesKeepOnlyTheWayAsked) {
  namespace analysis = kbench::analysis;
  const auto a = analysis::sum_profiles({store_profile(1, {{"entry_SYSCALL_64", 600}, {"helper [mod]", 100},
                                                           {"__task_pid_nr_ns", 100}, {"do_syscall_64", 200}})});
  const auto b = analysis::sum_profiles({store_profile(2, {{"entry_SYSCALL_64", 350}, {"helper [mod]", 300},
                                                           {"__task_pid_nr_ns", 100}, {"do_syscall_64", 200}})});
  const auto shifts = analysis::function_shifts(a, b);
  ASSERT_EQ(shifts.front().function, "entry_SYSCALL_64");
  const auto gained = analysis::top_moves(shifts, analysis::ShareMove::Gained, 2);
  ASSERT_EQ(gained.size(), 2u);
  EXPECT_EQ(gained[0].function, "helper [mod]");
  EXPECT_EQ(gained[1].function, "do_syscall_64");
  const auto lost = analysis::top_moves(shifts, analysis::ShareMove::Lost, 3);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].function, "entry_SYSCALL_64");
  EXPECT_TRUE(analysis::top_moves(analysis::function_shifts(a, a), analysis::ShareMove::Gained, 3).empty());
}

TEST(KernelProfileShifts, AModuleFunctionIsTimedByItsBareName) {
  EXPECT_EQ(kbench::analysis::kfunc_command("patched", "helper [mod]", "ctxsw/pipe-threads"),
            "kbench run --swprofile patched --benchmark kfunc/helper");
  EXPECT_EQ(kbench::analysis::kfunc_commands("base", "patched", "helper [mod]", "ctxsw/pipe-threads"),
            (std::vector<std::string>{"kbench run --swprofile base --benchmark kfunc/helper",
                                      "kbench run --swprofile patched --benchmark kfunc/helper",
                                      "kbench compare base patched --benchmark kfunc/helper"}));
}

// kfunc/ is driven by the profiled benchmark's own path where it has that
// workload; elsewhere by its default, the ping-pong, with no --param.
TEST(KernelProfileShifts, TheTimingCommandsDriveTheFunctionByTheProfiledBenchmarksPath) {
  namespace analysis = kbench::analysis;
  EXPECT_EQ(analysis::kfunc_workload("syscall/getppid"), "getppid");
  EXPECT_EQ(analysis::kfunc_workload("syscall/getpid"), "getpid");
  EXPECT_EQ(analysis::kfunc_workload("ctxsw/pipe-threads"), "pingpong");
  EXPECT_EQ(analysis::kfunc_workload("sock/tcp-rr"), std::nullopt);
  EXPECT_EQ(analysis::kfunc_command("patched", "__task_pid_nr_ns", "syscall/getppid"),
            "kbench run --swprofile patched --benchmark kfunc/__task_pid_nr_ns --param workload=getppid");
  EXPECT_EQ(analysis::kfunc_command("patched", "pipe_read", "sock/tcp-rr"),
            "kbench run --swprofile patched --benchmark kfunc/pipe_read");
}

// What a bisect times after its sandwich: the first functions of each
// regression's shift whose benchmark has a workload, each once; an
// improvement's functions are not candidates.
TEST(KernelProfileShifts, KfuncCandidatesAreTheRegressionsFirstFunctionsWithAWorkload) {
  namespace analysis = kbench::analysis;
  const auto shift = [](const std::string& benchmark, analysis::Verdict verdict,
                        std::vector<std::string> functions) {
    analysis::KernelTimeShift out{.benchmark = benchmark, .verdict = verdict};
    for (const auto& function : functions) out.functions.push_back(analysis::FunctionShift{.function = function});
    return out;
  };
  analysis::Report report;
  report.tables.resize(2);
  report.tables[0].kernel_time = {
      shift("syscall/getppid", analysis::Verdict::Regression, {"__do_sys_getppid", "__task_pid_nr_ns", "x"}),
      shift("sock/tcp-rr", analysis::Verdict::Regression, {"tcp_sendmsg"}),
      shift("syscall/getpid", analysis::Verdict::Improvement, {"__task_pid_nr_ns"}),
  };
  report.tables[1].kernel_time = {
      shift("syscall/getppid", analysis::Verdict::Regression, {"__task_pid_nr_ns", "helper [mod]"}),
      shift("sock/tcp-rr", analysis::Verdict::Regression, {"tcp_recvmsg"}),
      shift("ctxsw/pipe-threads", analysis::Verdict::Regression, {}),
  };
  std::vector<std::string> without;
  const auto candidates = analysis::kfunc_candidates(report, 2, without);
  std::vector<std::string> named;
  for (const auto& c : candidates) named.push_back(c.benchmark + " " + c.workload + " " + c.profiled);
  EXPECT_EQ(named, (std::vector<std::string>{"kfunc/__do_sys_getppid getppid syscall/getppid",
                                             "kfunc/__task_pid_nr_ns getppid syscall/getppid",
                                             "kfunc/helper getppid syscall/getppid"}));
  EXPECT_EQ(candidates.back().function, "helper [mod]");
  EXPECT_EQ(without, std::vector<std::string>{"sock/tcp-rr"});
  without.clear();
  EXPECT_EQ(analysis::kfunc_candidates(report, 1, without).size(), 2u);
  EXPECT_TRUE(analysis::kfunc_candidates(report, 0, without).empty());
}

TEST(KernelProfileShifts, WhenNoCandidateGotSlowerTheLineSaysWhereToLookNext) {
  namespace analysis = kbench::analysis;
  const std::vector<analysis::KfuncCandidate> candidates = {
      {"__task_pid_nr_ns", "kfunc/__task_pid_nr_ns", "getppid", "syscall/getppid"},
      {"pid_nr_ns", "kfunc/pid_nr_ns", "getppid", "syscall/getppid"},
      {"__task_pid_nr_ns", "kfunc/__task_pid_nr_ns", "getpid", "syscall/getpid"},
  };
  EXPECT_EQ(analysis::none_slower_lines(candidates, "P", "C"),
            (std::vector<std::string>{
                "none of them got slower in its own time: their shares grew because time was added elsewhere "
                "(`kbench profile P C --benchmark syscall/getpid --top 20` lists more functions; "
                "`--benchmark kfunc/<function> --param workload=getpid` times one)",
                "none of them got slower in its own time: their shares grew because time was added elsewhere "
                "(`kbench profile P C --benchmark syscall/getppid --top 20` lists more functions; "
                "`--benchmark kfunc/<function> --param workload=getppid` times one)"}));
  EXPECT_TRUE(analysis::none_slower_lines({}, "P", "C").empty());
}

TEST(KernelProfileShifts, SharesAreRoughBelowAHundredSamplesOnEitherSide) {
  EXPECT_TRUE(kbench::analysis::rough_shares(99, 5000));
  EXPECT_TRUE(kbench::analysis::rough_shares(5000, 99));
  EXPECT_FALSE(kbench::analysis::rough_shares(100, 100));
}

TEST(KernelProfileShifts, UnavailableProfilesAreCountedNotSummed) {
  auto unavailable = store_profile(2, {});
  unavailable.profile.unavailable = "perf_event_open refused";
  const auto sum = kbench::analysis::sum_profiles({store_profile(1, {{"f", 3}}), unavailable, unavailable});
  EXPECT_EQ(sum.sessions, 3);
  EXPECT_EQ(sum.samples, 3u);
  EXPECT_EQ(sum.unavailable, std::vector<std::string>{"perf_event_open refused"});
}

}  // namespace
