// The qemu connection for a guest of another architecture (arch: aarch64):
// what it checks before any boot. Booting a Debian arm64 kernel is
// tests/e2e/qemu_arm64.sh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "support/error_text.h"
#include "sut/connection.h"
#include "support/test_files.h"

namespace kbench::sut {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using kbench::testing::error_of;

// An ELF header claiming `machine` (e_machine), little-endian: enough for the
// architecture checks, which read the header only; nothing here runs it.
std::string write_elf(const fs::path& path, unsigned machine) {
  std::string header(64, '\0');
  header.replace(0, 4, "\x7f" "ELF");
  header[4] = 2;
  header[5] = 1;
  header[18] = static_cast<char>(machine & 0xff);
  header[19] = static_cast<char>(machine >> 8);
  std::ofstream(path, std::ios::binary) << header;
  fs::permissions(path, fs::perms::owner_all);
  return path.string();
}

constexpr unsigned kAarch64 = 183;
constexpr unsigned kX86_64 = 62;

bool host_is_x86_64() {
  utsname host{};
  uname(&host);
  return std::string(host.machine) == "x86_64";
}

TEST(QemuArm64Params, AnUnknownArchitectureNamesTheParam) {
  const std::string message = error_of([] {
    make_qemu_connection({{"arch", "sparc64"}}, {"/proc/self/exe", {}, {}, {}, {}}, "/nonexistent");
  });
  EXPECT_THAT(message, HasSubstr("sut.connection.params.arch: expected x86_64 or aarch64, got 'sparc64'"));
}

TEST(QemuArm64Params, KvmForAForeignGuestIsABadInput) {
  if (!host_is_x86_64()) GTEST_SKIP() << "skipped: the host is not x86-64";
  const std::string message = error_of([] {
    make_qemu_connection({{"arch", "arm64"}, {"accel", "kvm"}}, {"/proc/self/exe", {}, {}, {}, {}}, "/nonexistent");
  });
  EXPECT_THAT(message, HasSubstr("sut.connection.params.accel: kvm runs x86_64 guests"));
  EXPECT_THAT(message, HasSubstr("the guest is aarch64"));
}

TEST(QemuArm64Params, TheHostBusyboxIsRefusedForAnAarch64Guest) {
  kbench::testing::TempDir dir;
  const std::string busybox = write_elf(dir.path() / "busybox", kX86_64);
  const std::string message = error_of([&] {
    make_qemu_connection({{"arch", "aarch64"}, {"busybox", busybox}}, {"/proc/self/exe", {}, {}, {}, {}}, "/nonexistent");
  });
  EXPECT_THAT(message, HasSubstr("sut.connection.params.busybox " + busybox +
                                 ": expected a static busybox built for aarch64, it is built for x86_64"));
  EXPECT_THAT(message, HasSubstr("busybox-static:arm64"));
}

TEST(QemuArm64Params, AMissingOrNonElfBusyboxIsABadInput) {
  kbench::testing::TempDir dir;
  const std::string script = (dir.path() / "busybox").string();
  std::ofstream(script) << "#!/bin/sh\n";
  EXPECT_THAT(error_of([&] {
                make_qemu_connection({{"arch", "aarch64"}, {"busybox", script}}, {"/proc/self/exe", {}, {}, {}, {}}, "");
              }),
              HasSubstr("it is not an ELF executable"));
  EXPECT_THAT(error_of([&] {
                make_qemu_connection({{"arch", "aarch64"}, {"busybox", "/no/such/busybox"}},
                                     {"/proc/self/exe", {}, {}, {}, {}}, "");
              }),
              HasSubstr("expected a readable static busybox for aarch64"));
}

TEST(QemuArm64Agent, WithoutAnAarch64AgentTheConnectionSaysWhereItLooked) {
  if (std::getenv("KBENCH_AGENT_AARCH64")) GTEST_SKIP() << "skipped: KBENCH_AGENT_AARCH64 is set";
  kbench::testing::TempDir dir;
  const std::string busybox = write_elf(dir.path() / "busybox", kAarch64);
  const std::string host_agent = write_elf(dir.path() / "kbench-agent", kX86_64);
  try {
    make_qemu_connection({{"arch", "aarch64"}, {"busybox", busybox}}, {"/proc/self/exe", {}, {}, {}, {}}, host_agent);
    FAIL() << "an aarch64 VM was set up without an aarch64 agent";
  } catch (const RunError& error) {
    EXPECT_THAT(error.what(), HasSubstr("the SUT is aarch64 but no kbench-agent for aarch64 was found"));
    EXPECT_THAT(error.what(), HasSubstr((dir.path() / "kbench-agent-aarch64").string()));
  }
}

TEST(QemuArm64Agent, AnAarch64AgentBesideTheHostAgentIsEnough) {
  kbench::testing::TempDir dir;
  const std::string busybox = write_elf(dir.path() / "busybox", kAarch64);
  const std::string host_agent = write_elf(dir.path() / "kbench-agent", kX86_64);
  write_elf(dir.path() / "kbench-agent-aarch64", kAarch64);
  auto connection =
      make_qemu_connection({{"arch", "aarch64"}, {"busybox", busybox}}, {"/proc/self/exe", {}, {}, {}, {}}, host_agent);
  if (host_is_x86_64()) {
    EXPECT_THAT(connection->describe(), HasSubstr("qemu aarch64 /proc/self/exe"));
  }
}

}  // namespace
}  // namespace kbench::sut
