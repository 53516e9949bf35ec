// Several SUTs in one plan (suts:, class:), the fleet's plan keys, its
// progress view, and the declared class in the session fingerprint.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "app/fleet.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "runner/fleet_progress.h"
#include "runner/plan_executor.h"
#include "support/plan_errors.h"
#include "support/scoped_env.h"
#include "support/test_paths.h"

using kbench::InputError;
using kbench::plan::parse_plan;

namespace {

std::string fleet_plan_error(const std::string& yaml) { return kbench::testing::plan_error(yaml, "fleet.yaml"); }

// Everything a FILE* received, for the progress view.
class Captured {
 public:
  Captured() : file_(std::tmpfile()) {}
  ~Captured() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  std::FILE* file_;
};

}  // namespace

TEST(FleetPlan, ParsesAListOfSutsWithClassesAndConnections) {
  const auto plan = parse_plan(R"(
suts:
  - {name: m7g-1, class: aws-m7g, connection: {method: ssh, params: {host: m7g-1.lab}}}
  - name: ampere-1
    class: AmpereOne
    connection: {method: ssh, params: {host: ampere-1.lab, port: "2222"}}
    boot: {method: reboot, timeout: 15m}
  - {name: here}
benchmarks: [syscall/getppid]
)", "fleet.yaml");
  EXPECT_FALSE(plan.sut);
  ASSERT_EQ(plan.suts.size(), 3u);
  EXPECT_EQ(plan.suts[0].name, "m7g-1");
  EXPECT_EQ(plan.suts[0].sut_class, "aws-m7g");
  EXPECT_EQ(plan.suts[0].method, "ssh");
  EXPECT_EQ(plan.suts[0].params.at("host"), "m7g-1.lab");
  EXPECT_EQ(plan.suts[1].sut_class, "AmpereOne");
  EXPECT_EQ(plan.suts[1].params.at("port"), "2222");
  ASSERT_TRUE(plan.suts[1].boot);
  EXPECT_EQ(plan.suts[1].boot->method, "reboot");
  EXPECT_EQ(plan.suts[1].boot->timeout, std::chrono::minutes(15));
  EXPECT_EQ(plan.suts[2].method, "local");
  EXPECT_EQ(plan.suts[2].sut_class, "");
  EXPECT_EQ(plan.suts[2].line, 8);  // the text begins with a newline

  const auto one = plan.for_sut(plan.suts[1]);
  ASSERT_TRUE(one.sut);
  EXPECT_EQ(one.sut->name, "ampere-1");
  EXPECT_TRUE(one.suts.empty());
  EXPECT_EQ(one.benchmarks.size(), 1u);
}

TEST(FleetPlan, OneSutMayDeclareItsClass) {
  const auto plan = parse_plan("sut: {name: lab-1, class: aws-m7g}\nbenchmarks: [syscall/getppid]\n", "p.yaml");
  ASSERT_TRUE(plan.sut);
  EXPECT_EQ(plan.sut->sut_class, "aws-m7g");
  EXPECT_TRUE(plan.suts.empty());
}

TEST(FleetPlan, RefusesSutAndSutsTogether) {
  EXPECT_EQ(fleet_plan_error("sut: {name: a}\nsuts:\n  - {name: b}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:3: suts: expected either sut (one SUT) or suts (a list), not both");
}

TEST(FleetPlan, RefusesAnEmptyList) {
  EXPECT_EQ(fleet_plan_error("suts: []\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:1: suts: expected a non-empty list of SUTs");
  EXPECT_EQ(fleet_plan_error("suts: {name: a}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:1: suts: expected a non-empty list of SUTs");
}

TEST(FleetPlan, RefusesDuplicateNames) {
  EXPECT_EQ(
      fleet_plan_error("suts:\n  - {name: a}\n  - {name: b}\n  - {name: a, class: x}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:4: suts[].name: expected unique names, 'a' appears twice");
}

TEST(FleetPlan, RefusesAnUnnamedSut) {
  EXPECT_EQ(fleet_plan_error("suts:\n  - {name: a}\n  - {class: aws-m7g}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:3: suts[].name: expected a name for every SUT in the list");
  EXPECT_EQ(fleet_plan_error("suts:\n  - {name: \"  \"}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:2: suts[].name: expected a non-blank name without control characters, got '  '");
  EXPECT_EQ(fleet_plan_error("suts:\n  - lab-1\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:2: suts[]: expected a mapping");
}

TEST(FleetPlan, RefusesABadClassName) {
  EXPECT_EQ(fleet_plan_error("suts:\n  - {name: a, class: \"aws m7g\"}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:2: suts[].class: expected a SUT class name of letters, digits, '.', '_' and '-' (at most 64), "
            "got 'aws m7g'");
  EXPECT_NE(fleet_plan_error("sut: {name: a, class: [x]}\nbenchmarks: [syscall/getppid]\n")
                .find("sut.class: expected a scalar"),
            std::string::npos);
}

TEST(FleetPlan, ChecksEachSutAsItChecksTheOne) {
  EXPECT_EQ(fleet_plan_error("suts:\n  - {name: a, connection: {method: telnet}}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:2: suts[].connection.method: expected lava, local, qemu or ssh, got 'telnet'");
  EXPECT_EQ(fleet_plan_error("suts:\n  - {name: a, boot: {method: kexec}}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:2: suts[].boot: expected suts[].connection.method ssh (the machine kbench runs on boots kernels "
            "only as a plan's single sut)");
  EXPECT_EQ(fleet_plan_error("suts:\n  - {name: a, connection: {method: ssh}}\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:2: suts[].connection.params.host: expected the SUT's host name for ssh");
}

TEST(FleetSelection, SelectsByNameInThePlansOrderAndRefusesUnknownNames) {
  const auto plan = parse_plan("suts:\n  - {name: a}\n  - {name: b}\n  - {name: c}\nbenchmarks: [syscall/getppid]\n",
                               "fleet.yaml");
  const auto picked = kbench::app::select_suts(plan, {"c", "a"});
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].name, "a");
  EXPECT_EQ(picked[1].name, "c");
  EXPECT_EQ(kbench::app::select_suts(plan, {}).size(), 3u);
  const auto globbed = kbench::app::select_suts(plan, {"[bc]"});
  ASSERT_EQ(globbed.size(), 2u);
  EXPECT_EQ(globbed[0].name, "b");
  // A worker's --sut is its SUT's exact name, never a pattern.
  EXPECT_THROW(kbench::app::select_suts(plan, {"[bc]"}, /*exact=*/true), InputError);
  try {
    kbench::app::select_suts(plan, {"d"});
    FAIL() << "an unknown --sut was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--sut d: plan fleet.yaml has no such SUT (known: a, b, c)");
  }
  const auto single = parse_plan("sut: {name: a}\nbenchmarks: [syscall/getppid]\n", "one.yaml");
  EXPECT_TRUE(kbench::app::select_suts(single, {}).empty());
  EXPECT_THROW(kbench::app::select_suts(single, {"a"}), InputError);
}

TEST(FleetSelection, EachSutResumesUnderAKeyOfItsOwn) {
  EXPECT_NE(kbench::app::fleet_plan_key("/p.yaml", "a"), kbench::app::fleet_plan_key("/p.yaml", "b"));
  EXPECT_NE(kbench::app::fleet_plan_key("/p.yaml", "a"), "/p.yaml");
}

TEST(FleetFingerprint, TheDeclaredClassReplacesTheDerivedOneWhichIsKept) {
  nlohmann::json fingerprint = {{"sut_class", "x86_64-16c-intel"}, {"hostname", "h"}};
  kbench::runner::declare_sut_class(fingerprint, "aws-m7g");
  EXPECT_EQ(fingerprint["sut_class"], "aws-m7g");
  EXPECT_EQ(fingerprint["sut_class_derived"], "x86_64-16c-intel");

  nlohmann::json undeclared = {{"sut_class", "x86_64-16c-intel"}};
  kbench::runner::declare_sut_class(undeclared, "");
  EXPECT_EQ(undeclared["sut_class"], "x86_64-16c-intel");
  EXPECT_FALSE(undeclared.contains("sut_class_derived"));
}

TEST(FleetProgressView, OffATerminalEveryLineIsPrefixedWithItsSut) {
  Captured out;
  kbench::runner::FleetProgress view(out.file(), false, {"a", "bb"});
  view.line("a", "[1/2] base session 1 syscall/getppid: 2 repeats in 0.1s");
  view.line("a", "[2/2] base session 1 syscall/read ...");
  view.line("bb", "kbench: warning: machine busy");
  EXPECT_EQ(out.text(), "a: [1/2] base session 1 syscall/getppid: 2 repeats in 0.1s\n"
                        "bb: kbench: warning: machine busy\n");
}

TEST(FleetProgressView, OnATerminalStepLinesReplaceTheSutsStatusLine) {
  Captured out;
  kbench::runner::FleetProgress view(out.file(), true, {"a", "bb"}, 40);
  view.message("start");
  view.line("a", "[1/2] base session 1 syscall/getppid: 2 repeats in 0.1s");
  view.line("bb", "kbench: boot failed");
  view.line("bb", "[1/2] base session 1 x ...");
  const std::string text = out.text();
  // The block of two status lines is cleared and drawn again after each line.
  EXPECT_NE(text.find("start\na   starting\nbb  starting\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\r\033[2A\033[Ja   [1/2] base session 1 syscall/getppi\nbb  starting\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\r\033[2A\033[Jbb: kbench: boot failed\na   [1/2]"), std::string::npos) << text;
  // A step that starts shows on its SUT's line at once.
  EXPECT_NE(text.find("\nbb  [1/2] base session 1 x ...\n"), std::string::npos) << text;
}

TEST(FleetProgressView, RecognisesStepLines) {
  EXPECT_TRUE(kbench::runner::is_step_line("[3/8] base session 1 syscall/getppid: 2 repeats in 0.4s"));
  EXPECT_FALSE(kbench::runner::is_step_line("kbench: resuming session 1"));
  EXPECT_FALSE(kbench::runner::is_step_line("[note] x"));
  EXPECT_TRUE(kbench::runner::is_step_start("[3/8] base session 1 syscall/getppid ..."));
  EXPECT_FALSE(kbench::runner::is_step_start("[3/8] base session 1 syscall/getppid: 2 repeats in 0.4s"));
}

namespace {

// A crossover plan with `suts` and `swprofiles` as given (YAML lines).
std::string crossover_plan(const std::string& suts, const std::string& swprofiles) {
  return "design: crossover\n" + suts + swprofiles + "benchmarks: [syscall/getppid]\n";
}

const std::string kTwoSuts = "suts:\n  - {name: a, class: lab}\n  - {name: b, class: lab}\n";
const std::string kTwoProfiles = "swprofiles: [{name: A}, {name: B}]\n";

}  // namespace

TEST(FleetPlan, ReadsTheDesignInterleavedByDefault) {
  EXPECT_EQ(parse_plan(kTwoSuts + "benchmarks: [syscall/getppid]\n", "p.yaml").design,
            kbench::plan::Design::Interleaved);
  EXPECT_EQ(parse_plan("design: interleaved\n" + kTwoSuts + "benchmarks: [syscall/getppid]\n", "p.yaml").design,
            kbench::plan::Design::Interleaved);
  const auto plan = parse_plan(crossover_plan(kTwoSuts, kTwoProfiles), "p.yaml");
  EXPECT_EQ(plan.design, kbench::plan::Design::Crossover);
  EXPECT_EQ(plan.design_line, 1);
  EXPECT_EQ(fleet_plan_error("design: latin-square\n" + kTwoSuts + "benchmarks: [syscall/getppid]\n"),
            "fleet.yaml:1: design: expected interleaved, crossover or duet, got 'latin-square'");
}

TEST(FleetPlan, RefusesACrossoverOfOtherThanTwoSutsOfOneClassUnderTwoSwprofiles) {
  EXPECT_EQ(fleet_plan_error(crossover_plan("sut: {name: a, class: lab}\n", kTwoProfiles)),
            "fleet.yaml:1: design: expected crossover with a suts: list of exactly 2 SUTs of one class, got a "
            "single sut:");
  EXPECT_EQ(fleet_plan_error(crossover_plan(kTwoSuts + "  - {name: c, class: lab}\n", kTwoProfiles)),
            "fleet.yaml:1: design: expected crossover with a suts: list of exactly 2 SUTs of one class, got 3 SUTs");
  EXPECT_EQ(fleet_plan_error(crossover_plan("suts:\n  - {name: a, class: lab}\n  - {name: b, class: other}\n",
                                            kTwoProfiles)),
            "fleet.yaml:1: design: expected crossover's 2 SUTs to declare the same class:, got 'lab' and 'other'");
  EXPECT_EQ(fleet_plan_error(crossover_plan("suts:\n  - {name: a}\n  - {name: b}\n", kTwoProfiles)),
            "fleet.yaml:1: design: expected crossover's 2 SUTs to declare the same class:, got none and none");
  EXPECT_EQ(fleet_plan_error(crossover_plan(kTwoSuts, "swprofiles: [{name: A}, {name: B}, {name: C}]\n")),
            "fleet.yaml:1: design: expected crossover with exactly 2 swprofiles, got 3");
  EXPECT_EQ(fleet_plan_error(crossover_plan(kTwoSuts, "")),
            "fleet.yaml:1: design: expected crossover with exactly 2 swprofiles, got 0");
}

TEST(FleetPlan, ACrossoverMeasuresBothSutsAndBothSwprofilesUnlessResumed) {
  const auto plan = parse_plan(crossover_plan(kTwoSuts, kTwoProfiles), "fleet.yaml");
  // What the local SUTs' connections run, once the design is accepted.
  const std::string agent_path = KBENCH_BINARY_DIR + "/kbench-agent";
  kbench::testing::ScopedEnv agent{"KBENCH_AGENT", agent_path.c_str()};
  kbench::app::FleetOptions options;
  try {
    kbench::app::check_fleet(plan, kbench::app::select_suts(plan, {"b"}), options);
    FAIL() << "a crossover of one SUT was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "fleet.yaml:1: design: expected crossover's 2 SUTs measured together, got --sut selecting "
                           "b (leave out --sut, or continue one SUT with --resume)");
  }
  options.swprofiles = {"B"};
  try {
    kbench::app::check_fleet(plan, plan.suts, options);
    FAIL() << "a crossover of one swprofile was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "fleet.yaml:1: design: expected crossover's 2 swprofiles measured together, got "
                           "--swprofile selecting B (leave out --swprofile, or continue with --resume)");
  }
  options.resume = true;
  EXPECT_NO_THROW(kbench::app::check_fleet(plan, kbench::app::select_suts(plan, {"b"}), options));
  options.swprofiles.clear();
  options.resume = false;
  EXPECT_NO_THROW(kbench::app::check_fleet(plan, plan.suts, options));
}

TEST(FleetPlan, ADuetIsOneVmOnThisMachineUnderTwoSwprofiles) {
  const std::string vm = "sut: {name: vm, connection: {method: qemu, params: {memory: 512M}}}\n";
  const auto plan = parse_plan("design: duet\n" + vm + kTwoProfiles + "benchmarks: [syscall/getppid]\n", "p.yaml");
  EXPECT_EQ(plan.design, kbench::plan::Design::Duet);
  // Its two workers: the one SUT twice, named by half.
  const auto workers = kbench::app::duet_workers(plan);
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0].name, "vm#0");
  EXPECT_EQ(workers[1].name, "vm#1");
  EXPECT_EQ(workers[1].method, "qemu");
  EXPECT_EQ(fleet_plan_error("design: duet\nsut: {name: here}\n" + kTwoProfiles + "benchmarks: [syscall/getppid]\n"),
            "fleet.yaml:1: design: expected duet with one sut: whose connection boots a VM on this machine (method "
            "qemu), got method local");
  EXPECT_EQ(fleet_plan_error("design: duet\n" + kTwoSuts + kTwoProfiles + "benchmarks: [syscall/getppid]\n"),
            "fleet.yaml:1: design: expected duet with one sut: whose connection boots a VM on this machine (method "
            "qemu), got a suts: list");
  EXPECT_EQ(fleet_plan_error("design: duet\n" + vm + "swprofiles: [{name: A}]\nbenchmarks: [syscall/getppid]\n"),
            "fleet.yaml:1: design: expected duet with exactly 2 swprofiles, got 1");
}
