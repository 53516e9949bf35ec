#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "plan/plan.h"
#include "support/plan_errors.h"
#include "support/test_files.h"
#include "support/test_paths.h"

using kbench::InputError;
using kbench::plan::parse_duration;
using kbench::plan::parse_plan;
using kbench::testing::plan_error;

TEST(Plan, ParsesTheDesignExample) {
  const auto plan = parse_plan(R"(
sut: {name: lab-1, connection: {method: local}}
swprofiles:
  - {name: base,    kernel: /boot/vmlinuz-a, cmdline: [mitigations=auto]}
  - {name: patched, kernel: /boot/vmlinuz-b}
benchmarks:
  - include: syscall/getpid
  - {name: perf/sched, params: {loops: 200000}}
defaults: {benchmark: {warmups: 1, repeats: 5, sessions: 2, timeout: 10m}}
)", "p.yaml");
  ASSERT_TRUE(plan.sut);
  EXPECT_EQ(plan.sut->name, "lab-1");
  EXPECT_EQ(plan.sut->method, "local");
  ASSERT_EQ(plan.swprofiles.size(), 2u);
  EXPECT_EQ(plan.swprofiles[0].cmdline, std::vector<std::string>{"mitigations=auto"});
  ASSERT_EQ(plan.benchmarks.size(), 2u);
  EXPECT_EQ(plan.benchmarks[0].name, "syscall/getpid");
  EXPECT_EQ(plan.benchmarks[1].params.at("loops"), "200000");
  EXPECT_EQ(plan.defaults.repeats, 5);
  EXPECT_EQ(plan.defaults.sessions, 2);
  EXPECT_EQ(plan.defaults.timeout, std::chrono::minutes(10));
  EXPECT_EQ(plan.benchmarks[1].line, 8);
}

TEST(Plan, PerBenchmarkSettingsOverrideDefaults) {
  const auto plan = parse_plan(R"(
defaults: {benchmark: {repeats: 5, size: quick}}
benchmarks:
  - {name: perf/sched, repeats: 9}
  - syscall/getpid
)", "p.yaml");
  EXPECT_EQ(plan.settings_for(plan.benchmarks[0]).repeats, 9);
  EXPECT_EQ(plan.settings_for(plan.benchmarks[0]).size, "quick");
  EXPECT_EQ(plan.settings_for(plan.benchmarks[1]).repeats, 5);
}

TEST(Plan, FamilyDefaultsChangeOnlyWhatTheyName) {
  const auto plan = parse_plan(R"(
defaults:
  benchmark: {repeats: 2, sessions: 5, size: quick, timeout: 3m}
  families:
    syscall: {sessions: 12, repeats: 1}
benchmarks:
  - syscall/getpid
  - perf/sched
  - {name: syscall/invalid, sessions: 3}
)", "p.yaml");
  const auto getpid = plan.settings_for(plan.benchmarks[0]);
  EXPECT_EQ(getpid.sessions, 12);
  EXPECT_EQ(getpid.repeats, 1);
  EXPECT_EQ(getpid.size, "quick");
  EXPECT_EQ(getpid.timeout, std::chrono::minutes(3));
  EXPECT_EQ(plan.settings_for(plan.benchmarks[1]).sessions, 5);
  EXPECT_EQ(plan.settings_for(plan.benchmarks[1]).repeats, 2);
  // An entry's own settings are the whole of them, as without families.
  EXPECT_EQ(plan.settings_for(plan.benchmarks[2]).sessions, 3);
  EXPECT_EQ(plan.settings_for(plan.benchmarks[2]).repeats, 2);
}

TEST(Plan, FamilyDefaultsComeThroughAnIncludeOverItsNewDefaults) {
  const kbench::testing::TempDir dir;
  std::ofstream(dir.path() / "suite.yaml") << "benchmarks: [syscall/getpid, perf/sched]\n"
                                             "defaults: {benchmark: {size: quick, repeats: 2}, families: {syscall: "
                                             "{sessions: 12}}}\n";
  std::ofstream(dir.path() / "mine.yaml") << "include: suite.yaml\ndefaults: {benchmark: {repeats: 4}}\n";
  const auto plan = kbench::plan::load_plan((dir.path() / "mine.yaml").string());
  EXPECT_EQ(plan.settings_for(plan.benchmarks[0]).sessions, 12);
  EXPECT_EQ(plan.settings_for(plan.benchmarks[0]).repeats, 4);
  EXPECT_EQ(plan.settings_for(plan.benchmarks[1]).sessions, 1);
}

TEST(Plan, BadFamilyDefaultsAreNamed) {
  EXPECT_EQ(plan_error("defaults: {families: [syscall]}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.families: expected a mapping of benchmark families to settings");
  EXPECT_EQ(plan_error("defaults: {families: {syscall/getpid: {sessions: 2}}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.families: expected a benchmark family (syscall, perf, ...), got 'syscall/getpid'");
  EXPECT_EQ(plan_error("defaults: {families: {syscall: 12}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.families.syscall: expected a mapping of settings (warmups, repeats, sessions, timeout, "
            "size)");
  EXPECT_EQ(plan_error("defaults: {families: {syscall: {sessions: 0}}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.families.syscall.sessions: expected an integer from 1 to 10000, got '0'");
  EXPECT_EQ(plan_error("defaults: {families: {syscall: {rounds: 2}}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.families.syscall.rounds: expected one of the keys kernel_profile, repeats, sessions, "
            "size, timeout, warmups (unknown key)");
}

TEST(Plan, KernelProfileIsASetting) {
  const auto plan = parse_plan(R"(
defaults: {benchmark: {kernel_profile: true}}
benchmarks:
  - {name: perf/sched, kernel_profile: false}
  - syscall/getpid
)", "p.yaml");
  EXPECT_FALSE(plan.settings_for(plan.benchmarks[0]).kernel_profile);
  EXPECT_TRUE(plan.settings_for(plan.benchmarks[1]).kernel_profile);
  EXPECT_FALSE(parse_plan("benchmarks: [a/b]\n", "p.yaml").defaults.kernel_profile);
  EXPECT_EQ(plan_error("defaults: {benchmark: {kernel_profile: yes please}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.benchmark.kernel_profile: expected true or false, got 'yes please'");
}

TEST(Plan, ErrorsNameFileLineKeyAndExpectation) {
  EXPECT_EQ(plan_error("benchmarks:\n  - include: syscall/getpid\nfoo: 1\n"),
            "p.yaml:3: foo: expected one of the keys benchmarks, defaults, design, include, order, sut, suts, swprofiles (unknown key)");
  EXPECT_EQ(plan_error("benchmarks:\n  - getpid\n"),
            "p.yaml:2: benchmarks[]: expected a benchmark name of the form suite/name, got 'getpid'");
  EXPECT_EQ(plan_error("defaults:\n  benchmark:\n    repeats: many\nbenchmarks: [a/b]\n"),
            "p.yaml:3: defaults.benchmark.repeats: expected an integer from 1 to 10000, got 'many'");
  EXPECT_EQ(plan_error("swprofiles:\n  - name: a\n  - name: a\nbenchmarks: [a/b]\n"),
            "p.yaml:3: swprofiles[].name: expected unique names, 'a' appears twice");
  EXPECT_EQ(plan_error("defaults: {benchmark: {timeout: soon}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.benchmark.timeout: expected a duration in whole seconds from 1s to 24h such as 90s, 10m or 1h, got 'soon'");
  EXPECT_NE(plan_error("benchmarks: [a/b\n").find("p.yaml:"), std::string::npos);
  EXPECT_EQ(plan_error("sut: {}\n"), "p.yaml:1: benchmarks: expected a list of benchmarks");
}

// The command line refuses these (--timeout 1ms, --repeats 99999999999); a
// plan must refuse them too rather than run a 0 s timeout.
TEST(Plan, SettingsHaveTheCommandLinesRanges) {
  EXPECT_EQ(plan_error("defaults: {benchmark: {timeout: 1ms}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.benchmark.timeout: expected a duration in whole seconds from 1s to 24h such as 90s, "
            "10m or 1h, got '1ms'");
  EXPECT_EQ(plan_error("defaults: {benchmark: {repeats: 99999999999}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.benchmark.repeats: expected an integer from 1 to 10000, got '99999999999'");
  EXPECT_EQ(plan_error("defaults: {benchmark: {sessions: 10001}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: defaults.benchmark.sessions: expected an integer from 1 to 10000, got '10001'");
  EXPECT_EQ(kbench::plan::parse_timeout("1h30m", "t"), std::chrono::seconds(5400));
  EXPECT_THROW(kbench::plan::parse_timeout("1500ms", "t"), InputError);
  EXPECT_THROW(kbench::plan::parse_timeout("25h", "t"), InputError);
}

TEST(Plan, Durations) {
  EXPECT_EQ(parse_duration("90s", "t"), std::chrono::seconds(90));
  EXPECT_EQ(parse_duration("1h30m", "t"), std::chrono::minutes(90));
  EXPECT_EQ(parse_duration("250ms", "t"), std::chrono::milliseconds(250));
  EXPECT_THROW(parse_duration("10", "t"), InputError);
  EXPECT_THROW(parse_duration("m10", "t"), InputError);
  EXPECT_THROW(parse_duration("0s", "t"), InputError);
  EXPECT_THROW(parse_duration("", "t"), InputError);
}

TEST(Plan, MissingFileIsInputError) {
  EXPECT_THROW(kbench::plan::load_plan("/nonexistent/plan.yaml"), InputError);
}

TEST(Plan, ShippedSuitesParse) {
  for (const char* suite : {"quick", "default"}) {
    const auto plan = kbench::plan::load_plan(std::string(KBENCH_TEST_DATA_DIR) + "/../../plans/" + suite + ".yaml");
    EXPECT_GE(plan.benchmarks.size(), 20u) << suite;
    EXPECT_EQ(plan.defaults.size, suite);
  }
}

// yaml-cpp builds `&a [*a]` as a node inside itself and nested aliases as one
// node repeated exponentially; both are bad input, and found at once.
TEST(Plan, AliasesInsideTheirNodeOrRepeatingTooMuchAreRefused) {
  EXPECT_EQ(plan_error("benchmarks: &a [*a]\n"),
            "p.yaml:1: expected an alias of a node that ends before it (this one is inside the node it names, which "
            "would contain itself)");
  EXPECT_EQ(plan_error("sut: &s {name: *s}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: expected an alias of a node that ends before it (this one is inside the node it names, which "
            "would contain itself)");
  // Nine levels of nine aliases: 387 million nodes from 1 KB.
  std::ostringstream laughs;
  laughs << "l0: &l0 [a, a, a, a, a, a, a, a, a]\n";
  for (int level = 1; level < 9; ++level) {
    laughs << "l" << level << ": &l" << level << " [";
    for (int i = 0; i < 9; ++i) laughs << (i ? ", " : "") << "*l" << level - 1;
    laughs << "]\n";
  }
  laughs << "benchmarks: [a/b]\n";
  // Refused at line 6, where the count first passes the bound: by the parser
  // events, before any walk of the tree (which took 23 s, and ended in an
  // unrelated error, on this plan).
  EXPECT_EQ(plan_error(laughs.str()),
            "p.yaml:6: expected aliases that repeat at most 100000 nodes in all (nested aliases repeat more)");
  // An alias of a node that ended before it is what plans use them for.
  const auto plan = parse_plan("swprofiles:\n  - {name: a, cmdline: &words [x=1]}\n  - {name: b, cmdline: *words}\n"
                               "benchmarks: [a/b]\n", "p.yaml");
  ASSERT_EQ(plan.swprofiles.size(), 2u);
  EXPECT_EQ(plan.swprofiles[1].cmdline, std::vector<std::string>{"x=1"});
}

// An empty list is a mistake: `swprofiles: []` leaves plan exec no swprofile
// to run, and `benchmarks: []` would store sessions of nothing as complete.
TEST(Plan, EmptySwprofileAndBenchmarkListsAreRefused) {
  EXPECT_EQ(plan_error("swprofiles: []\nbenchmarks: [a/b]\n"),
            "p.yaml:1: swprofiles: expected at least one swprofile (or no swprofiles key, to name one with "
            "--swprofile)");
  EXPECT_EQ(plan_error("swprofiles: [{name: a}]\nbenchmarks: []\n"),
            "p.yaml:2: benchmarks: expected at least one benchmark");
}

// Names end up in reports and json outputs, which carry them as text.
TEST(Plan, NamesAreUtf8) {
  using kbench::plan::name_expectation;
  for (const char* name : {"base", "caf\xc3\xa9", "\xe5\x9f\xba\xe5\x87\x86", "\xf0\x9f\x90\xa7"}) {
    EXPECT_EQ(name_expectation(name), "") << name;
  }
  EXPECT_EQ(name_expectation("a\xff"), "a name in UTF-8 (byte 2 is not)");
  EXPECT_EQ(name_expectation("\xc0\xaf"), "a name in UTF-8 (byte 1 is not)");          // overlong '/'
  EXPECT_EQ(name_expectation("x\xed\xa0\x80"), "a name in UTF-8 (byte 2 is not)");    // a surrogate
  EXPECT_EQ(name_expectation("\xf4\x90\x80\x80"), "a name in UTF-8 (byte 1 is not)");  // past U+10FFFF
  EXPECT_EQ(name_expectation("ab\xe2\x82"), "a name in UTF-8 (byte 3 is not)");        // cut short
  EXPECT_EQ(name_expectation(" "), "a non-blank name without control characters");
  EXPECT_EQ(plan_error("swprofiles:\n  - name: \"a\xff\"\nbenchmarks: [a/b]\n"),
            "p.yaml:2: swprofiles[].name: expected a name in UTF-8 (byte 2 is not), got 'a\xff'");
  EXPECT_EQ(plan_error("sut: {name: \"\xff\"}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: sut.name: expected a name in UTF-8 (byte 1 is not), got '\xff'");
  EXPECT_EQ(plan_error("suts:\n  - {name: \"b\xff\"}\nbenchmarks: [a/b]\n"),
            "p.yaml:2: suts[].name: expected a name in UTF-8 (byte 2 is not), got 'b\xff'");
}

namespace {

// A flattened device tree's header as dtc writes it: the magic, then the
// total size, here the file's own (the rest of a real blob is not read).
std::string write_dtb(const std::filesystem::path& path, std::uint32_t magic = 0xd00dfeed) {
  std::string bytes(64, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>(magic >> (24 - 8 * i));
  bytes[7] = 64;
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

std::string qemu_plan_with_dtb(const std::string& dtb) {
  return "sut: {connection: {method: qemu, params: {arch: aarch64}}}\n"
         "swprofiles:\n"
         "  - {name: base, kernel: /boot/Image}\n"
         "  - {name: marked, kernel: {image: /boot/Image, dtb: '" + dtb + "'}}\n"
         "benchmarks: [a/b]\n";
}

}  // namespace

TEST(PlanDtb, AFlattenedDeviceTreeGoesWithTheImage) {
  kbench::testing::TempDir dir;
  const std::string dtb = write_dtb(dir.path() / "board.dtb");
  const auto plan = parse_plan(qemu_plan_with_dtb(dtb), "p.yaml");
  EXPECT_EQ(plan.swprofiles[0].kernel.dtb, "");
  EXPECT_EQ(plan.swprofiles[1].kernel.dtb, dtb);
  EXPECT_EQ(plan.swprofiles[1].kernel.describe(), "/boot/Image + dtb " + dtb);
  const auto lava = parse_plan("sut: {connection: {method: lava, params: {url: 'http://lava/', token_file: t, "
                               "device_type: qemu}}}\nswprofiles: [{name: a, kernel: {image: /boot/Image, dtb: '" +
                                   dtb + "'}}]\nbenchmarks: [a/b]\n",
                               "p.yaml");
  EXPECT_EQ(lava.swprofiles[0].kernel.dtb, dtb);
}

TEST(PlanDtb, AMissingFileOrOneWithoutTheMagicIsOneLineNamingSwprofileAndFile) {
  kbench::testing::TempDir dir;
  const std::string missing = (dir.path() / "no-such.dtb").string();
  EXPECT_EQ(plan_error(qemu_plan_with_dtb(missing)),
            "p.yaml:4: swprofiles[].kernel.dtb: expected a flattened device tree file for swprofile marked, got " +
                missing + " (there is no such file)");
  // An image named as the dtb: the usual mix-up.
  const std::string elf = write_dtb(dir.path() / "vmlinux", 0x7f454c46);
  EXPECT_EQ(plan_error(qemu_plan_with_dtb(elf)),
            "p.yaml:4: swprofiles[].kernel.dtb: expected a flattened device tree file for swprofile marked, got " + elf +
                " (it starts with 0x7f454c46, not the device tree magic 0xd00dfeed)");
  const std::string empty = (dir.path() / "empty.dtb").string();
  std::ofstream(empty).flush();
  EXPECT_EQ(plan_error(qemu_plan_with_dtb(empty)),
            "p.yaml:4: swprofiles[].kernel.dtb: expected a flattened device tree file for swprofile marked, got " +
                empty + " (it is shorter than a device tree header)");
  EXPECT_EQ(plan_error(qemu_plan_with_dtb(dir.path().string())),
            "p.yaml:4: swprofiles[].kernel.dtb: expected a flattened device tree file for swprofile marked, got " +
                dir.path().string() + " (it is not a regular file)");
  // The header's size beyond the file's end: a download cut short.
  const std::string cut = write_dtb(dir.path() / "cut.dtb");
  std::filesystem::resize_file(cut, 40);
  EXPECT_EQ(plan_error(qemu_plan_with_dtb(cut)),
            "p.yaml:4: swprofiles[].kernel.dtb: expected a flattened device tree file for swprofile marked, got " + cut +
                " (it is cut short: its header says 64 bytes, the file has 40)");
}

TEST(PlanDtb, ASutThatCannotHandItToTheKernelRefusesIt) {
  kbench::testing::TempDir dir;
  const std::string dtb = write_dtb(dir.path() / "board.dtb");
  const std::string swprofiles = "swprofiles: [{name: a, kernel: {image: /boot/Image, dtb: '" + dtb + "'}}]\n";
  EXPECT_EQ(plan_error(swprofiles + "benchmarks: [a/b]\n"),
            "p.yaml:1: swprofiles[].kernel.dtb: expected a SUT that boots swprofile a's kernel with it (connection "
            "qemu or lava), got no sut (the machine kbench runs on, measured under its running kernel)");
  EXPECT_EQ(plan_error("sut: {name: board, connection: {method: ssh, params: {host: b}}, boot: {method: kexec}}\n" +
                       swprofiles + "benchmarks: [a/b]\n"),
            "p.yaml:2: swprofiles[].kernel.dtb: expected a SUT that boots swprofile a's kernel with it (connection "
            "qemu or lava), got sut board with connection ssh and sut.boot (a kexec would pass the device tree on to "
            "the boots after it)");
  EXPECT_EQ(plan_error("suts:\n  - {name: q, connection: {method: qemu}}\n  - {name: here}\n" + swprofiles +
                       "benchmarks: [a/b]\n"),
            "p.yaml:4: swprofiles[].kernel.dtb: expected a SUT that boots swprofile a's kernel with it (connection "
            "qemu or lava), got sut here with connection local (it measures the running kernel)");
  EXPECT_EQ(plan_error("sut: {connection: {method: qemu}}\nswprofiles: [{name: a, kernel: {deb: linux.deb, dtb: '" +
                       dtb + "'}}]\nbenchmarks: [a/b]\n"),
            "p.yaml:2: swprofiles[].kernel.image: expected the kernel image that the dtb belongs to");
}
