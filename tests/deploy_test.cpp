// Deploying kernels onto ssh SUTs: what kbench reads from kernel images,
// how it decides a boot is the one asked for, which agent goes to which
// architecture, and the plan keys that ask for all of it. The boots
// themselves run against a real VM in tests/e2e/deploy_kexec.sh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/elf_machine.h"
#include "common/errors.h"
#include "deploy/deployer.h"
#include "deploy/kernel_identity.h"
#include "plan/plan.h"
#include "process/process.h"
#include "sut/connection.h"
#include "support/test_files.h"
#include "support/plan_errors.h"
#include "support/test_paths.h"

namespace kbench {
namespace {

using ::testing::HasSubstr;
using deploy::KernelIdentity;

// A minimal x86 bzImage: the setup header's magic and the pointer to the
// kernel_version string, as the boot protocol lays them out.
std::string fake_bzimage(const std::string& version_string) {
  std::string bytes(0x1000, '\0');
  bytes.replace(0x202, 4, "HdrS");
  const std::size_t at = 0x400;
  bytes[0x20e] = static_cast<char>((at - 0x200) & 0xff);
  bytes[0x20f] = static_cast<char>((at - 0x200) >> 8);
  bytes.replace(at, version_string.size(), version_string);
  return bytes;
}

const char* kDebianBanner =
    "Linux version 6.1.0-47-cloud-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-12 (Debian "
    "12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 "
    "(2025-11-09)";

TEST(KernelIdentity, BzImageHeaderGivesReleaseAndBuild) {
  const auto identity = deploy::identity_of_image(fake_bzimage(
      "6.12.117+deb12-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1~deb12u1 "
      "(2026-11-14)"));
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->release, "6.12.117+deb12-amd64");
  EXPECT_EQ(identity->version, "#1 SMP PREEMPT_DYNAMIC Debian 6.12.117-1~deb12u1 (2026-11-14)");
}

TEST(KernelIdentity, ProcVersionBannerWithNestedParentheses) {
  const auto identity = deploy::identity_of_banner(std::string(kDebianBanner) + "\n");
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->release, "6.1.0-47-cloud-amd64");
  EXPECT_EQ(identity->version, "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)");
  EXPECT_FALSE(deploy::identity_of_banner("Linux 6.1"));
  EXPECT_FALSE(deploy::identity_of_banner("Linux version 6.1 (unbalanced"));
}

TEST(KernelIdentity, BannerInsideAPlainOrGzippedImage) {
  // An arm64 Image carries the banner as plain text; Image.gz inside gzip.
  const std::string image = std::string(4096, '\x01') + kDebianBanner + "\n" + std::string('\0', 1) +
                            std::string(4096, '\x02');
  const auto plain = deploy::identity_of_image(image);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->release, "6.1.0-47-cloud-amd64");
  const auto gzipped = process::run_command({"gzip", "-c"}, image, std::chrono::seconds(30));
  ASSERT_EQ(gzipped.exit_status, 0);
  const auto inflated = deploy::identity_of_image(gzipped.out);
  ASSERT_TRUE(inflated);
  EXPECT_EQ(*inflated, *plain);
  EXPECT_FALSE(deploy::identity_of_image(std::string(8192, '\x03')));
  EXPECT_FALSE(deploy::identity_of_image(gzipped.out.substr(0, 10)));  // a truncated gzip
}

TEST(KernelIdentity, RealDebianKernelWhenTheTestKernelIsThere) {
  const char* kernel = std::getenv("KBENCH_TEST_KERNEL");
  if (!kernel || !std::filesystem::exists(kernel)) GTEST_SKIP() << "skipped: KBENCH_TEST_KERNEL not set";
  const auto identity = deploy::identity_of_image(testing::read_file(kernel));
  ASSERT_TRUE(identity);
  // Debian names the file after the release.
  EXPECT_EQ("vmlinuz-" + identity->release, std::filesystem::path(kernel).filename().string());
  EXPECT_THAT(identity->version, HasSubstr("#1 SMP"));
}

plan::SwprofileSpec profile_with(std::vector<std::string> cmdline, plan::CmdlineMode mode) {
  plan::SwprofileSpec profile;
  profile.name = "p";
  profile.cmdline = std::move(cmdline);
  profile.cmdline_mode = mode;
  return profile;
}

TEST(BootCmdline, AppendsToTheSutsOwnWithoutTheLoadersWords) {
  const std::string sut = "BOOT_IMAGE=/boot/vmlinuz-6.1 root=/dev/vda rw console=ttyS0";
  EXPECT_EQ(deploy::boot_cmdline(sut, profile_with({"mitigations=off"}, plan::CmdlineMode::Append)),
            (std::vector<std::string>{"root=/dev/vda", "rw", "console=ttyS0", "mitigations=off"}));
  EXPECT_EQ(deploy::boot_cmdline(sut, profile_with({"root=/dev/vdb", "quiet"}, plan::CmdlineMode::Replace)),
            (std::vector<std::string>{"root=/dev/vdb", "quiet"}));
}

TEST(BootVerification, MatchesWhenReleaseBuildAndCmdlineAgree) {
  const KernelIdentity expected{"6.12.1", "#1 SMP (2026-01-01)"};
  EXPECT_TRUE(deploy::boot_mismatches(expected, {"root=/dev/vda", "quiet"}, expected,
                                      "BOOT_IMAGE=/kbench/vmlinuz root=/dev/vda quiet\n")
                  .empty());
}

TEST(BootVerification, NamesEveryDifference) {
  const KernelIdentity expected{"6.12.1", "#1 SMP (2026-01-01)"};
  const auto differences =
      deploy::boot_mismatches(expected, {"root=/dev/vda", "mitigations=off"}, {"6.1.0-50-cloud-amd64", "#1 SMP (2025)"},
                              "root=/dev/vda");
  ASSERT_EQ(differences.size(), 3u);
  EXPECT_EQ(differences[0], "uname -r is '6.1.0-50-cloud-amd64', expected '6.12.1'");
  EXPECT_THAT(differences[1], HasSubstr("another build of the release"));
  EXPECT_EQ(differences[2], "/proc/cmdline is 'root=/dev/vda', expected 'root=/dev/vda mitigations=off'");
}

TEST(BootVerification, TheSameReleaseRebuiltIsAMismatch) {
  // A developer's A and B often share a release string ("6.8.0-rc1+"): the
  // build stamp tells them apart.
  const auto differences = deploy::boot_mismatches({"6.8.0-rc1+", "#2 SMP Mon"}, {"ro"}, {"6.8.0-rc1+", "#3 SMP Tue"},
                                                   "ro");
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_THAT(differences[0], HasSubstr("uname -v is '#3 SMP Tue', expected '#2 SMP Mon'"));
}

// An ELF header claiming `machine` (e_machine), little-endian.
void write_elf(const std::filesystem::path& path, unsigned machine) {
  std::string header(64, '\0');
  header.replace(0, 4, "\x7f" "ELF");
  header[4] = 2;  // 64-bit
  header[5] = 1;  // little-endian
  header[18] = static_cast<char>(machine & 0xff);
  header[19] = static_cast<char>(machine >> 8);
  std::ofstream(path, std::ios::binary) << header;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

TEST(AgentForMachine, TheDefaultAgentServesItsOwnArchitecture) {
  testing::TempDir dir;
  write_elf(dir.path() / "kbench-agent", 62);
  EXPECT_EQ(kbench::elf_machine((dir.path() / "kbench-agent").string()), "x86_64");
  EXPECT_EQ(sut::agent_for_machine("x86_64", (dir.path() / "kbench-agent").string()),
            (dir.path() / "kbench-agent").string());
}

TEST(AgentForMachine, AnArm64SutGetsTheAarch64AgentBesideIt) {
  testing::TempDir dir;
  write_elf(dir.path() / "kbench-agent", 62);
  write_elf(dir.path() / "kbench-agent-aarch64", 183);
  EXPECT_EQ(sut::agent_for_machine("arm64", (dir.path() / "kbench-agent").string()),
            (dir.path() / "kbench-agent-aarch64").string());
}

TEST(AgentForMachine, NoMatchingAgentFailsNamingWhereItLooked) {
  testing::TempDir dir;
  write_elf(dir.path() / "kbench-agent", 62);
  // Named for aarch64 but built for x86-64: not pushed.
  write_elf(dir.path() / "kbench-agent-aarch64", 62);
  try {
    sut::agent_for_machine("aarch64", (dir.path() / "kbench-agent").string());
    FAIL() << "an x86-64 agent was accepted for an aarch64 SUT";
  } catch (const RunError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the SUT is aarch64 but no kbench-agent for aarch64 was found"));
    EXPECT_THAT(e.what(), HasSubstr((dir.path() / "kbench-agent-aarch64").string()));
    EXPECT_THAT(e.what(), HasSubstr("KBENCH_AGENT_AARCH64"));
  }
}

TEST(AgentForMachine, TheRealAgentIsBuiltForThisMachine) {
  const std::string agent = std::string(KBENCH_BINARY_DIR) + "/kbench-agent";
  const auto machine = process::run_command({"uname", "-m"}, "", std::chrono::seconds(10));
  EXPECT_EQ(kbench::elf_machine(agent) + "\n", machine.out);
}

using testing::plan_error;

TEST(DeployPlan, ParsesKernelsAndTheBootSection) {
  const auto plan = plan::parse_plan(R"(
sut:
  name: lab-1
  connection: {method: ssh, params: {host: lab-1}}
  boot: {method: kexec, timeout: 5m, power_cycle: "ipmitool chassis power cycle", console_log: /var/log/lab-1}
swprofiles:
  - {name: a, kernel: {deb: a.deb}, cmdline: [mitigations=off]}
  - {name: b, kernel: {image: bzImage, modules: modules.tar.xz, config: .config}, cmdline_mode: replace, cmdline: root=/dev/vda}
  - {name: c, kernel: {release: 6.1.0-50-amd64}, sysctl: {kernel.sched_autogroup_enabled: "0"}}
benchmarks: [syscall/getppid]
)",
                                     "p.yaml");
  ASSERT_TRUE(plan.sut && plan.sut->boot);
  EXPECT_EQ(plan.sut->boot->method, "kexec");
  EXPECT_EQ(plan.sut->boot->timeout, std::chrono::seconds(300));
  EXPECT_EQ(plan.sut->boot->power_cycle, "ipmitool chassis power cycle");
  EXPECT_EQ(plan.sut->boot->console_log, "/var/log/lab-1");
  EXPECT_EQ(plan.swprofiles[0].kernel.deb, "a.deb");
  EXPECT_EQ(plan.swprofiles[0].cmdline_mode, plan::CmdlineMode::Append);
  EXPECT_EQ(plan.swprofiles[1].kernel.image, "bzImage");
  EXPECT_EQ(plan.swprofiles[1].kernel.modules, "modules.tar.xz");
  EXPECT_EQ(plan.swprofiles[1].cmdline_mode, plan::CmdlineMode::Replace);
  EXPECT_EQ(plan.swprofiles[2].kernel.describe(), "installed 6.1.0-50-amd64");
}

TEST(DeployPlan, BadKernelAndBootKeysAreNamed) {
  const std::string ssh = "sut: {connection: {method: ssh, params: {host: h}}";
  EXPECT_EQ(plan_error(ssh + ", boot: {method: pxe}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: sut.boot.method: expected kexec or reboot, got 'pxe'");
  EXPECT_THAT(plan_error(ssh + ", boot: {timeout: soon}}\nbenchmarks: [a/b]\n"),
              HasSubstr("sut.boot.timeout: expected a duration"));
  EXPECT_EQ(plan_error("sut: {connection: {method: qemu}, boot: {}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: sut.boot: expected sut.connection.method local or ssh (kbench boots kernels on ssh SUTs and "
            "on the machine it runs on)");
  EXPECT_EQ(plan_error("swprofiles: [{name: a, kernel: {deb: a.deb, image: b}}]\nbenchmarks: [a/b]\n"),
            "p.yaml:1: swprofiles[].kernel: expected either deb or image (with modules), not both");
  EXPECT_EQ(plan_error("swprofiles: [{name: a, kernel: {modules: m.tar}}]\nbenchmarks: [a/b]\n"),
            "p.yaml:1: swprofiles[].kernel.image: expected the kernel image that the modules and config belong to");
  EXPECT_THAT(plan_error("swprofiles: [{name: a, kernel: {rpm: a.rpm}}]\nbenchmarks: [a/b]\n"),
              HasSubstr("swprofiles[].kernel.rpm: expected one of the keys config, deb, dtb, image, modules, release"));
  EXPECT_EQ(plan_error("swprofiles: [{name: a, kernel: {release: ../x}}]\nbenchmarks: [a/b]\n"),
            "p.yaml:1: swprofiles[].kernel.release: expected a kernel release as uname -r prints it, got '../x'");
  EXPECT_EQ(plan_error("swprofiles: [{name: a, cmdline_mode: prepend}]\nbenchmarks: [a/b]\n"),
            "p.yaml:1: swprofiles[].cmdline_mode: expected append or replace, got 'prepend'");
}

}  // namespace
}  // namespace kbench
