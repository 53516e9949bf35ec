// Parameter specs, the one validation and resolution, CPU lists, and the
// plan checks that belong to parameters and input bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "benchmarks/benchmark.h"
#include "common/cpu_list.h"
#include "common/errors.h"
#include "common/params.h"
#include "plan/plan.h"
#include "runner/catalogue.h"
#include "support/error_text.h"
#include "support/test_paths.h"

namespace kbench {
namespace {

using testing::error_of;

TEST(ParamSpec, IntegerOutOfKindNamesBenchmarkParameterAndRange) {
  const auto spec = ParamSpec{"calls", "100", "10", "calls"}.integer(1, 1e9);
  EXPECT_EQ(error_of([&] { validate_param("syscall/getpid", spec, "abc"); }),
            "syscall/getpid: parameter 'calls' = 'abc': expected an integer from 1 to 1000000000");
  EXPECT_NE(error_of([&] { validate_param("b", spec, "0"); }, "(no InputError)"), "(no InputError)");
  EXPECT_NE(error_of([&] { validate_param("b", spec, "1000000001"); }, "(no InputError)"), "(no InputError)");
  EXPECT_NE(error_of([&] { validate_param("b", spec, "12x"); }, "(no InputError)"), "(no InputError)");
  EXPECT_NE(error_of([&] { validate_param("b", spec, ""); }, "(no InputError)"), "(no InputError)");
  EXPECT_NO_THROW(validate_param("b", spec, "1000000000"));
}

TEST(ParamSpec, NumberSizeBooleanChoice) {
  const auto seconds = ParamSpec{"time", "1", "1", ""}.number(0.001, 600);
  EXPECT_NO_THROW(validate_param("b", seconds, "0.5"));
  EXPECT_THROW(validate_param("b", seconds, "nan"), InputError);
  EXPECT_THROW(validate_param("b", seconds, "inf"), InputError);
  EXPECT_THROW(validate_param("b", seconds, "601"), InputError);
  const auto bytes = ParamSpec{"stride", "128B", "128B", ""}.size(8, 4096);
  EXPECT_NO_THROW(validate_param("b", bytes, "4KB"));
  EXPECT_THROW(validate_param("b", bytes, "8KB"), InputError);
  EXPECT_THROW(validate_param("b", bytes, "99999999999999999999G"), InputError);
  const auto flag = ParamSpec{"shared", "0", "0", ""}.boolean();
  EXPECT_NO_THROW(validate_param("b", flag, "1"));
  EXPECT_THROW(validate_param("b", flag, "yes"), InputError);
  const auto mode = ParamSpec{"cpus", "same", "same", ""}.choice({"same", "spread"});
  EXPECT_EQ(error_of([&] { validate_param("perf/sched", mode, "far"); }),
            "perf/sched: parameter 'cpus' = 'far': expected one of same, spread");
}

TEST(ParamSpec, ListsAndWords) {
  const auto groups = ParamSpec{"groups", "auto", "1,4", ""}.integer(1, 100).list_of().or_word("auto");
  EXPECT_NO_THROW(validate_param("b", groups, "auto"));
  EXPECT_NO_THROW(validate_param("b", groups, "1,4,7"));
  EXPECT_THROW(validate_param("b", groups, "1,,4"), InputError);
  EXPECT_THROW(validate_param("b", groups, ""), InputError);
  EXPECT_THROW(validate_param("b", groups, "1,101"), InputError);
  EXPECT_EQ(describe_expected(groups), "'auto' or a comma-separated list, each an integer from 1 to 100");
}

TEST(ResolveParams, SizeValuesOverridesAndUnknownKeys) {
  const std::vector<ParamSpec> specs = {ParamSpec{"calls", "100", "10", ""}.integer(1, 1000)};
  EXPECT_EQ(resolve_params("x/y", specs, Size::Quick, {}).at("calls"), "10");
  EXPECT_EQ(resolve_params("x/y", specs, Size::Default, {{"calls", "7"}}).at("calls"), "7");
  EXPECT_EQ(error_of([&] { resolve_params("x/y", specs, Size::Default, {{"cals", "7"}}); }),
            "x/y: no parameter 'cals' (known: calls)");
  EXPECT_THROW(resolve_params("x/y", specs, Size::Default, {{"calls", "abc"}}), InputError);
}

// Every shipped benchmark's own values pass its own specs: a spec that
// refused its default would make the benchmark unusable.
TEST(ResolveParams, EveryRegisteredBenchmarkAcceptsItsQuickAndDefaultValues) {
  const auto& registry = bench::Registry::instance();
  ASSERT_GT(registry.names().size(), 20u);
  for (const auto& name : registry.names()) {
    const auto benchmark = registry.create(name);
    EXPECT_NO_THROW(bench::resolve_params(*benchmark, Size::Quick, {})) << name;
    EXPECT_NO_THROW(bench::resolve_params(*benchmark, Size::Default, {})) << name;
  }
}

// The controller validates from the agent's list output alone: the spec
// survives the JSON round trip, and the controller's answer is the agent's.
TEST(Catalogue, ValidatesFromTheAgentsListWithoutRunningAnything) {
  const auto& registry = bench::Registry::instance();
  nlohmann::json list = nlohmann::json::array();
  for (const auto& name : registry.names()) {
    const auto benchmark = registry.create(name);
    nlohmann::json params = nlohmann::json::array();
    for (const auto& spec : benchmark->params()) params.push_back(to_json(spec));
    list.push_back({{"name", name}, {"description", ""}, {"params", params}});
  }
  const auto catalogue = runner::parse_catalogue({{"benchmarks", list}});
  const auto& getpid = catalogue.entries.at("syscall/getpid");
  EXPECT_EQ(error_of([&] { getpid.effective_params("default", {{"calls", "abc"}}); }),
            "syscall/getpid: parameter 'calls' = 'abc': expected an integer from 1 to 100000000000");
  const auto& sched = catalogue.entries.at("perf/sched");
  EXPECT_THROW(sched.effective_params("quick", {{"tests", "pipe,nosuch"}}), InputError);
  EXPECT_EQ(sched.effective_params("quick", {{"tests", "pipe"}}).at("tests"), "pipe");
}

TEST(Catalogue, AnOlderAgentsSpecWithoutKindIsAcceptedAsText) {
  const auto spec = param_spec_from_json({{"name", "calls"}, {"default", "1"}, {"quick", "1"}});
  EXPECT_EQ(spec.kind, ParamKind::String);
  EXPECT_NO_THROW(validate_param("b", spec, "abc"));
}

TEST(CpuList, OneParserForEveryList) {
  EXPECT_EQ(parse_cpu_list("0,2-3", "--cpus"), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(parse_cpu_list("3,1,1\n", "--cpus"), (std::vector<int>{1, 3}));
  for (const char* bad : {"", ",", "1,", "3-1", "a", "-1", "1-", "99999999", "0-2000000000"}) {
    EXPECT_THROW(parse_cpu_list(bad, "--cpus"), InputError) << bad;
  }
  EXPECT_EQ(format_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

TEST(CpuList, CpusAreCheckedAgainstTheSutsFingerprint) {
  const nlohmann::json remote = {{"cpus_allowed", "0-1"}, {"cpu_count", 2}};
  EXPECT_EQ(error_of([&] { runner::check_cpus_on_sut("99", remote, "ssh box"); }),
            "--cpus '99': CPU 99 is not one of the CPUs of SUT ssh box (0-1)");
  EXPECT_NO_THROW(runner::check_cpus_on_sut("1", remote, "ssh box"));
  // An older agent's fingerprint: only the count.
  EXPECT_THROW(runner::check_cpus_on_sut("4", {{"cpu_count", 4}}, "x"), InputError);
  EXPECT_NO_THROW(runner::check_cpus_on_sut("3", {{"cpu_count", 4}}, "x"));
  EXPECT_THROW(runner::check_cpus_on_sut("x", remote, "x"), InputError);
}

TEST(PlanInput, DuplicateKeysAreRefusedWithTheirLine) {
  EXPECT_EQ(error_of([] {
              plan::parse_plan("defaults:\n  benchmark: {repeats: 3}\nbenchmarks:\n  - name: a/b\n    repeats: 2\n"
                               "    repeats: 9\n",
                               "p.yaml");
            }),
            "p.yaml:6: duplicate key 'repeats'");
  EXPECT_EQ(error_of([] { plan::parse_plan("benchmarks: [a/b]\nbenchmarks: [c/d]\n", "p.yaml"); }),
            "p.yaml:2: duplicate key 'benchmarks'");
}

TEST(PlanInput, BlankSwprofileNamesAndOptionLikeSshHostsAreRefused) {
  EXPECT_NE(error_of([] { plan::parse_plan("swprofiles: [{name: ''}]\nbenchmarks: [a/b]\n", "p.yaml"); })
                .find("p.yaml:1: swprofiles[].name"),
            std::string::npos);
  EXPECT_THROW(plan::parse_plan("swprofiles: [{name: '  '}]\nbenchmarks: [a/b]\n", "p.yaml"), InputError);
  EXPECT_EQ(error_of([] {
              plan::parse_plan("sut:\n  connection:\n    method: ssh\n    params: {host: -oProxyCommand=x}\n"
                               "benchmarks: [a/b]\n",
                               "p.yaml");
            }),
            "p.yaml:4: sut.connection.params.host: expected a host name, got '-oProxyCommand=x'");
  EXPECT_THROW(plan::parse_plan("sut: {connection: {method: ssh}}\nbenchmarks: [a/b]\n", "p.yaml"), InputError);
}

TEST(PlanInput, SizeIsBoundedWhateverTheFile) {
  EXPECT_EQ(error_of([] { plan::load_plan("/dev/zero"); }),
            "plan /dev/zero: larger than 1 MiB (expected a YAML plan file)");
  const auto path = std::filesystem::temp_directory_path() / "kbench-params-test-big.yaml";
  {
    std::ofstream out(path);
    out << "benchmarks:\n";
    while (out.tellp() <= static_cast<std::streamoff>(plan::kMaxPlanBytes)) out << "  - a/b\n";
  }
  EXPECT_THROW(plan::load_plan(path.string()), InputError);
  std::filesystem::remove(path);
}

TEST(PlanInput, ShippedSuitesShareOneListAndDifferOnlyInDefaults) {
  const std::string dir = std::string(KBENCH_TEST_DATA_DIR) + "/../../plans/";
  const auto quick = plan::load_plan(dir + "quick.yaml");
  const auto standard = plan::load_plan(dir + "default.yaml");
  ASSERT_EQ(quick.benchmarks.size(), 24u);
  ASSERT_EQ(standard.benchmarks.size(), 24u);
  for (std::size_t i = 0; i < quick.benchmarks.size(); ++i) {
    EXPECT_EQ(quick.benchmarks[i].name, standard.benchmarks[i].name);
  }
  EXPECT_EQ(quick.defaults.size, "quick");
  EXPECT_EQ(quick.defaults.repeats, 2);
  // Sessions are the replicates compare tests: several by default.
  EXPECT_EQ(quick.defaults.sessions, 5);
  EXPECT_EQ(standard.defaults.sessions, 3);
  // The system-call rows: 12 sessions of one repeat in the quick suite.
  const auto getpid = std::find_if(quick.benchmarks.begin(), quick.benchmarks.end(),
                                   [](const auto& entry) { return entry.name == "syscall/getpid"; });
  ASSERT_NE(getpid, quick.benchmarks.end());
  EXPECT_EQ(quick.settings_for(*getpid).sessions, 12);
  EXPECT_EQ(quick.settings_for(*getpid).repeats, 1);
  EXPECT_EQ(quick.settings_for(*getpid).size, "quick");
  EXPECT_TRUE(standard.family_defaults.empty());
  EXPECT_EQ(quick.order, plan::Order::Shuffled);
  EXPECT_EQ(quick.defaults.timeout, std::chrono::minutes(3));
  EXPECT_EQ(standard.defaults.size, "default");
  EXPECT_EQ(standard.defaults.repeats, 1);
  EXPECT_EQ(standard.defaults.timeout, std::chrono::minutes(10));
  EXPECT_EQ(quick.benchmarks.front().name, "syscall/getpid");
  EXPECT_NE(quick.benchmarks.front().file.find("suite-benchmarks.yaml"), std::string::npos);
}

}  // namespace
}  // namespace kbench
