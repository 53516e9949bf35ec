// The qemu connection. The unit parts always run; booting a real kernel runs
// when KBENCH_TEST_KERNEL names one (`make test` fetches a Debian kernel with
// scripts/fetch-test-kernel.sh and hands it to ctest).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/errors.h"
#include "process/process.h"
#include "runner/agent_invocation.h"
#include "runner/session.h"
#include "store/result_store.h"
#include "sut/connection.h"
#include "sut/initramfs.h"
#include "support/error_text.h"
#include "support/test_paths.h"
#include "sysinfo/sha256.h"

namespace kbench::sut {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using process::CommandResult;
using process::run_command;
using process::shell_quote;
using std::chrono::seconds;
using testing::error_of;

std::string agent_path() { return std::string(KBENCH_BINARY_DIR) + "/kbench-agent"; }

TEST(Crc32, MatchesBusyboxAndZlib) {
  EXPECT_EQ(crc32_hex("hello"), "3610a686");
  EXPECT_EQ(crc32_hex(""), "00000000");
  EXPECT_EQ(crc32_hex("123456789"), "cbf43926");
}

// Unpacks `archive` into `dir` with the real cpio tool.
void extract_cpio(const std::string& archive, const fs::path& dir) {
  fs::create_directories(dir);
  const CommandResult extracted =
      run_command({"sh", "-c", "cd " + shell_quote(dir.string()) + " && cpio -id"}, archive, seconds(10));
  EXPECT_EQ(extracted.exit_status, 0) << extracted.err;
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(Cpio, CpioToolListsAndExtractsWhatWasWritten) {
  if (access("/usr/bin/cpio", X_OK) != 0 && access("/bin/cpio", X_OK) != 0) GTEST_SKIP() << "skipped: no cpio tool";
  CpioWriter writer;
  writer.add_directory("kbench");
  writer.add_file("kbench/args", "set -- 'a b' 'it'\\''s'\n", 0644);
  writer.add_file("odd", "xyz", 0755);  // sizes not a multiple of 4
  writer.add_symlink("link", "kbench/args");
  const std::string archive = writer.finish();
  const fs::path dir = fs::temp_directory_path() / ("kbench-cpio-" + std::to_string(getpid()));
  extract_cpio(archive, dir);
  EXPECT_EQ(first_line(dir / "kbench/args"), "set -- 'a b' 'it'\\''s'");
  EXPECT_EQ(fs::file_size(dir / "odd"), 3u);
  EXPECT_EQ(fs::read_symlink(dir / "link"), "kbench/args");
  fs::remove_all(dir);
}

// A tree under `root` packed by the real tar with `flags` (e.g. -J for xz).
fs::path pack_tree(const fs::path& root, const std::string& flags) {
  const fs::path tarball = root.string() + ".tar";
  const CommandResult packed = run_command({"tar", "-c" + flags + "f", tarball.string(), "-C", root.string(), "."}, "",
                                           seconds(60));
  EXPECT_EQ(packed.exit_status, 0) << packed.err;
  return tarball;
}

TEST(ModulesArchive, TheTarballsTreeComesOutOfTheArchiveAsItWent) {
  if (access("/usr/bin/cpio", X_OK) != 0 && access("/bin/cpio", X_OK) != 0) GTEST_SKIP() << "skipped: no cpio tool";
  const fs::path root = fs::temp_directory_path() / ("kbench-modules-" + std::to_string(getpid()));
  const fs::path release = root / "lib/modules/6.1.0-kb";
  fs::create_directories(release / "kernel/drivers/net");
  std::ofstream(release / "kernel/drivers/net/dummy.ko") << "not really a module";
  std::ofstream(release / "modules.dep") << "kernel/drivers/net/dummy.ko:\n";
  fs::create_symlink("/usr/src/linux-kb", release / "build");
  const fs::path tarball = pack_tree(root, "J");
  const std::string archive = modules_archive(tarball.string());
  EXPECT_EQ(modules_archive(tarball.string()), archive) << "one tarball, one archive";
  const fs::path out = root.string() + ".out";
  extract_cpio(archive, out);
  EXPECT_EQ(first_line(out / "lib/modules/6.1.0-kb/modules.dep"), "kernel/drivers/net/dummy.ko:");
  EXPECT_EQ(fs::file_size(out / "lib/modules/6.1.0-kb/kernel/drivers/net/dummy.ko"), 19u);
  EXPECT_EQ(fs::read_symlink(out / "lib/modules/6.1.0-kb/build"), "/usr/src/linux-kb");
  for (const fs::path& dir : {root, out}) fs::remove_all(dir);
  fs::remove(tarball);
}

TEST(ModulesArchive, WhatIsNotATarballOfLibModulesIsNamed) {
  const fs::path root = fs::temp_directory_path() / ("kbench-not-modules-" + std::to_string(getpid()));
  fs::create_directories(root / "boot");
  std::ofstream(root / "boot/vmlinuz") << "x";
  const fs::path no_modules = pack_tree(root, "");
  EXPECT_EQ(error_of([&] { modules_archive(no_modules.string()); }),
            "swprofile kernel.modules " + no_modules.string() +
                ": expected a tarball of lib/modules/RELEASE/ (it holds no lib/modules/ directory)");
  const fs::path text = root / "boot/vmlinuz";
  EXPECT_THAT(error_of([&] { modules_archive(text.string()); }),
              ::testing::StartsWith("swprofile kernel.modules " + text.string() +
                                    ": expected a tarball of lib/modules/RELEASE/ (tar: "));
  EXPECT_EQ(error_of([&] { modules_archive("/no/such.tar"); }),
            "swprofile kernel.modules /no/such.tar: expected a readable tarball of lib/modules/RELEASE/");
  fs::remove_all(root);
  fs::remove(no_modules);
}

// The /init is joined from assets/sut/init_*.sh: a fragment left out or
// joined out of order still makes a script, which only a boot would catch.
TEST(QemuInit, JoinsTheFragmentsInTheOrderTheyRun) {
  for (const std::string arch : {"x86_64", "aarch64"}) {
    SCOPED_TRACE(arch);
    const std::string init = qemu_init(arch);
    EXPECT_TRUE(init.starts_with("#!/bin/busybox sh\n"));
    EXPECT_EQ(init.find("#!", 1), std::string::npos);
    const auto applets = init.find("\n/bin/busybox --install -s /bin\n");
    const auto mounts = init.find("mount -t devtmpfs devtmpfs /dev\n");
    const auto channel = init.find(arch == "aarch64" ? "/sys/class/virtio-ports/vport" : "results=/dev/ttyS1\n");
    const auto framing = init.find("\nframe() {\n");
    const auto first_frame = init.find("| frame KBS1 >&3\n");
    ASSERT_NE(applets, std::string::npos);
    ASSERT_NE(mounts, std::string::npos);
    ASSERT_NE(channel, std::string::npos);
    ASSERT_NE(framing, std::string::npos);
    ASSERT_NE(first_frame, std::string::npos);
    EXPECT_LT(applets, mounts);
    EXPECT_LT(mounts, channel);
    EXPECT_LT(channel, framing);
    EXPECT_LT(framing, first_frame);
    EXPECT_EQ(init.find(arch == "aarch64" ? "/dev/ttyS1" : "virtio-ports"), std::string::npos);
    EXPECT_TRUE(init.ends_with("\npoweroff -f\n"));
  }
}

TEST(QemuParams, BadParametersNameTheKey) {
  const QemuBoot boot{"/proc/self/exe", {}, {}, {}, {}};
  EXPECT_THROW(make_qemu_connection({{"accel", "hvf"}}, boot, agent_path()), InputError);
  EXPECT_THROW(make_qemu_connection({{"cpus", "two"}}, boot, agent_path()), InputError);
  EXPECT_THROW(make_qemu_connection({{"memroy", "1G"}}, boot, agent_path()), InputError);
  EXPECT_THROW(make_qemu_connection({{"icount", "11"}}, boot, agent_path()), InputError);
  EXPECT_THROW(make_qemu_connection({}, QemuBoot{"/no/such/vmlinuz", {}, {}, {}, {}}, agent_path()), InputError);
}

TEST(QemuParams, IcountWithKvmIsRefused) {
  EXPECT_EQ(error_of([] {
              make_qemu_connection({{"accel", "kvm"}, {"icount", "0"}}, {"/proc/self/exe", {}, {}, {}, {}},
                                   agent_path());
            }),
            "sut.connection.params.icount: counts the instructions TCG executes; expected accel tcg, tcg-single or "
            "auto, got kvm");
}

// The plan checks a swprofile's dtb when it is read; the connection checks
// it again for whoever makes one without a plan.
TEST(QemuParams, ADtbThatIsNoDeviceTreeIsNamed) {
  EXPECT_EQ(error_of([] { make_qemu_connection({}, {"/proc/self/exe", {}, {}, {}, "/proc/self/exe"}, agent_path()); }),
            "swprofile kernel.dtb /proc/self/exe: expected a flattened device tree (it starts with 0x7f454c46, not "
            "the device tree magic 0xd00dfeed)");
}

bool have_qemu() { return run_command({"sh", "-c", "command -v qemu-system-x86_64"}, "", seconds(5)).exit_status == 0; }

TEST(QemuBoot, AFileThatIsNotAKernelFailsWithTheReason) {
  if (!have_qemu()) GTEST_SKIP() << "skipped: qemu-system-x86_64 not installed (Debian package qemu-system-x86)";
  const fs::path bogus = fs::temp_directory_path() / ("kbench-not-a-kernel-" + std::to_string(getpid()));
  std::ofstream(bogus) << "this is not a kernel image\n";
  auto connection = make_qemu_connection({{"accel", "tcg"}, {"boot_timeout", "60"}}, {bogus.string(), {}, {}, {}, {}},
                                         agent_path());
  const auto result =
      runner::invoke_agent(*connection, {"fingerprint"}, seconds(120), [](const nlohmann::json&) {});
  fs::remove(bogus);
  EXPECT_NE(result.exit_status, 0);
  EXPECT_NE(result.stderr_tail.find("the VM stopped before /init started"), std::string::npos) << result.stderr_tail;
}

const char* test_kernel() {
  const char* kernel = std::getenv("KBENCH_TEST_KERNEL");
  return kernel && *kernel ? kernel : nullptr;
}

std::map<std::string, std::string> vm_params() {
  std::map<std::string, std::string> params = {{"memory", "1024M"}, {"cpus", "1"}};
  if (const char* accel = std::getenv("KBENCH_TEST_ACCEL"); accel && *accel) params["accel"] = accel;
  if (const char* cpu = std::getenv("KBENCH_TEST_CPU"); cpu && *cpu) params["cpu"] = cpu;
  return params;
}

TEST(QemuBoot, FingerprintIsTakenInsideTheVmWithTheAccelerator) {
  if (!test_kernel()) GTEST_SKIP() << "skipped: set KBENCH_TEST_KERNEL (scripts/fetch-test-kernel.sh)";
  auto connection = make_qemu_connection(vm_params(), {test_kernel(), {"mitigations=off", "kbench.test=1"}, {}, {}, {}},
                                         agent_path());
  nlohmann::json fingerprint;
  const auto started = Clock::now();
  const auto result = runner::invoke_agent(*connection, {"fingerprint"}, seconds(300), [&](const nlohmann::json& r) {
    if (r["type"] == "fingerprint") fingerprint = r["data"];
  });
  std::cout << "boot + fingerprint: " << std::chrono::duration<double>(Clock::now() - started).count() << " s ("
            << qemu_accel(*connection) << ")\n";
  ASSERT_EQ(result.exit_status, 0) << result.stderr_tail;
  ASSERT_TRUE(fingerprint.is_object());
  EXPECT_NE(fingerprint["cmdline"].get<std::string>().find("mitigations=off kbench.test=1"), std::string::npos)
      << fingerprint.dump();
  const std::string kernel_name = fs::path(test_kernel()).filename().string();
  EXPECT_EQ("vmlinuz-" + fingerprint["kernel_release"].get<std::string>(), kernel_name);
  EXPECT_EQ(fingerprint["qemu_accel"], qemu_accel(*connection));
  EXPECT_TRUE(fingerprint["qemu_accel"] == "kvm" || fingerprint["qemu_accel"] == "tcg");
}

// With icount the guest's clock is QEMU's instruction count: the guest boots
// as usual, on a clocksource high-resolution timers accept, and its
// fingerprint says that the times it measured are counts.
TEST(QemuBoot, IcountBootsUnderTcgAndIsInTheFingerprint) {
  if (!test_kernel()) GTEST_SKIP() << "skipped: set KBENCH_TEST_KERNEL (scripts/fetch-test-kernel.sh)";
  auto params = vm_params();
  params.erase("accel");
  params["icount"] = "1";
  auto connection = make_qemu_connection(params, {test_kernel(), {}, {}, {}, {}}, agent_path());
  nlohmann::json fingerprint;
  const auto result = runner::invoke_agent(*connection, {"fingerprint"}, seconds(300), [&](const nlohmann::json& r) {
    if (r["type"] == "fingerprint") fingerprint = r["data"];
  });
  ASSERT_EQ(result.exit_status, 0) << result.stderr_tail;
  ASSERT_TRUE(fingerprint.is_object());
  EXPECT_EQ(fingerprint["qemu_accel"], "tcg");
  EXPECT_EQ(fingerprint["qemu_icount"], "shift=1");
  // The HPET, not the TSC: a small kernel's session can end before the
  // TSC's calibration, on tsc-early, which high-resolution timers refuse
  // (this Debian kernel boots long enough to reach "tsc").
  EXPECT_EQ(fingerprint["clocksource"], "hpet");
  EXPECT_NE(connection->describe().find("icount shift=1"), std::string::npos) << connection->describe();
}

// The guest finds the tarball's tree at /lib/modules: the agent hashes the
// config it finds there, as it does on a Fedora-style machine, when the
// kernel has no config-RELEASE beside it.
TEST(QemuBoot, TheSwprofilesModulesAreInTheGuest) {
  if (!test_kernel()) GTEST_SKIP() << "skipped: set KBENCH_TEST_KERNEL (scripts/fetch-test-kernel.sh)";
  const std::string name = fs::path(test_kernel()).filename().string();
  const fs::path config = fs::path(test_kernel()).parent_path() / ("config-" + name.substr(name.find('-') + 1));
  if (name.rfind("vmlinuz-", 0) != 0 || !fs::exists(config)) GTEST_SKIP() << "skipped: no config beside the kernel";
  const std::string release = name.substr(8);
  const fs::path root = fs::temp_directory_path() / ("kbench-guest-modules-" + std::to_string(getpid()));
  fs::create_directories(root / "lib/modules" / release);
  fs::copy_file(config, root / "lib/modules" / release / "config");
  const fs::path tarball = pack_tree(root, "z");
  // A copy without the config beside it, so the /boot one is not what the agent finds.
  const fs::path kernel = root.string() + ".bzImage";
  fs::copy_file(test_kernel(), kernel);
  auto connection = make_qemu_connection(vm_params(), {kernel.string(), {}, {}, tarball.string(), {}}, agent_path());
  nlohmann::json fingerprint;
  const auto result = runner::invoke_agent(*connection, {"fingerprint"}, seconds(300), [&](const nlohmann::json& r) {
    if (r["type"] == "fingerprint") fingerprint = r["data"];
  });
  ASSERT_EQ(result.exit_status, 0) << result.stderr_tail;
  EXPECT_EQ(fingerprint["kernel_release"], release);
  EXPECT_EQ(fingerprint["kernel_config_sha256"], sysinfo::file_sha256(config.string())) << fingerprint.dump();
  fs::remove_all(root);
  fs::remove(tarball);
  fs::remove(kernel);
}

TEST(QemuBoot, WeirdArgumentsReachTheAgentInsideUnchanged) {
  if (!test_kernel()) GTEST_SKIP() << "skipped: set KBENCH_TEST_KERNEL (scripts/fetch-test-kernel.sh)";
  auto connection = make_qemu_connection(vm_params(), {test_kernel(), {}, {}, {}, {}}, agent_path());
  const std::string name = "no such; $x \"y\" 'z' \\ *";
  const auto result =
      runner::invoke_agent(*connection, {"run", "--benchmark", name}, seconds(300), [](const nlohmann::json&) {});
  EXPECT_EQ(result.exit_status, 2) << result.stderr_tail;
  EXPECT_NE(result.stderr_tail.find("unknown benchmark '" + name + "'"), std::string::npos) << result.stderr_tail;
}

TEST(QemuBoot, AKernelThatPanicsFailsWithTheConsoleTail) {
  if (!test_kernel()) GTEST_SKIP() << "skipped: set KBENCH_TEST_KERNEL (scripts/fetch-test-kernel.sh)";
  // No such init: the kernel panics ("No working init found").
  auto connection = make_qemu_connection(vm_params(), {test_kernel(), {"rdinit=/no/such/init", "init=/no/such"}, {}, {}, {}},
                                         agent_path());
  const auto started = Clock::now();
  const auto result =
      runner::invoke_agent(*connection, {"fingerprint"}, seconds(300), [](const nlohmann::json&) {});
  std::cout << "panicking boot: " << std::chrono::duration<double>(Clock::now() - started).count() << " s\n";
  EXPECT_NE(result.exit_status, 0);
  EXPECT_FALSE(result.timed_out);
  EXPECT_NE(result.stderr_tail.find("console log tail"), std::string::npos) << result.stderr_tail;
  EXPECT_NE(result.stderr_tail.find("Kernel panic"), std::string::npos) << result.stderr_tail;
  std::cout << result.stderr_tail.substr(0, 200) << "...\n";
}

TEST(QemuBoot, AKernelThatDoesNotReachInitInTimeFailsWithTheConsoleTail) {
  if (!test_kernel()) GTEST_SKIP() << "skipped: set KBENCH_TEST_KERNEL (scripts/fetch-test-kernel.sh)";
  // Stands in for a hang: no kernel reaches /init in one second under TCG.
  auto params = vm_params();
  params["accel"] = "tcg";
  params["boot_timeout"] = "1";
  auto connection = make_qemu_connection(params, {test_kernel(), {}, {}, {}, {}}, agent_path());
  const auto result =
      runner::invoke_agent(*connection, {"fingerprint"}, seconds(300), [](const nlohmann::json&) {});
  EXPECT_NE(result.exit_status, 0);
  EXPECT_FALSE(result.timed_out);
  EXPECT_NE(result.stderr_tail.find("did not reach /init within 1s"), std::string::npos) << result.stderr_tail;
  EXPECT_NE(result.stderr_tail.find("console log tail"), std::string::npos) << result.stderr_tail;
}

}  // namespace
}  // namespace kbench::sut
