// The kernel image of a Debian kernel package (src/build/kernel_package.h),
// on real packages made with dpkg-deb --build: the image is unpacked once
// into the cache and nothing else of the package is, what is not a kernel
// package is bad input, and a plan's swprofiles get the image only where
// every SUT boots an image (qemu, lava), not where the package is installed
// (ssh).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "build/kernel_package.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "support/test_files.h"

namespace fs = std::filesystem;
using kbench::InputError;
using kbench::build::kernel_image_of_deb;
using kbench::build::unpack_deb_kernels;
using kbench::testing::read_file;
using kbench::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// A package built by dpkg-deb from `files` (path in the package -> content).
std::string make_deb(const fs::path& dir, const std::string& name, const std::map<std::string, std::string>& files) {
  const fs::path root = dir / (name + "-root");
  write(root / "DEBIAN/control", "Package: " + name +
                                     "\nVersion: 1.0\nArchitecture: all\nMaintainer: kbench <kbench@test.invalid>\n"
                                     "Description: a kbench test package\n");
  for (const auto& [path, content] : files) write(root / path, content);
  const std::string deb = (dir / (name + ".deb")).string();
  const std::string command = "dpkg-deb --root-owner-group --build " + root.string() + " " + deb + " >/dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return deb;
}

std::string error_of_unpacking(const std::string& deb, const std::string& cache) {
  try {
    kernel_image_of_deb(deb, "a", cache);
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST(KernelPackage, TheImageIsUnpackedOnceAndTheModulesAreNot) {
  TempDir dir;
  const std::string deb = make_deb(dir.path(), "linux-image-9.9.9-test",
                                   {{"boot/vmlinuz-9.9.9-test", "a kernel image"},
                                    {"boot/config-9.9.9-test", "CONFIG_X=y\n"},
                                    {"lib/modules/9.9.9-test/kernel/x.ko", "a module"}});
  const fs::path cache = dir.path() / "cache";
  const std::string image = kernel_image_of_deb(deb, "a", cache.string());
  EXPECT_EQ(fs::path(image).filename(), "vmlinuz-9.9.9-test");
  EXPECT_THAT(image, StartsWith((cache / "deb").string() + "/"));
  EXPECT_EQ(read_file(image), "a kernel image");
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(cache)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u) << "only the image is unpacked";
  // The second time it is found, not unpacked again.
  const auto marked = fs::last_write_time(image) - std::chrono::hours(24);
  fs::last_write_time(image, marked);
  EXPECT_EQ(kernel_image_of_deb(deb, "a", cache.string()), image);
  EXPECT_EQ(fs::last_write_time(image), marked);
  // Another package (another content) has a place of its own.
  const std::string other = make_deb(dir.path(), "linux-image-9.9.8-test", {{"boot/vmlinuz-9.9.8-test", "older"}});
  const std::string other_image = kernel_image_of_deb(other, "b", cache.string());
  EXPECT_NE(fs::path(other_image).parent_path(), fs::path(image).parent_path());
  EXPECT_EQ(read_file(other_image), "older");
}

TEST(KernelPackage, WhatIsNotAKernelPackageIsBadInputAndLeavesNothing) {
  TempDir dir;
  const std::string cache = (dir.path() / "cache").string();
  EXPECT_EQ(error_of_unpacking((dir.path() / "missing.deb").string(), cache),
            "swprofiles[a].kernel.deb " + (dir.path() / "missing.deb").string() +
                ": expected a readable Debian kernel package");
  write(dir.path() / "text.deb", "not a package\n");
  EXPECT_THAT(error_of_unpacking((dir.path() / "text.deb").string(), cache),
              StartsWith("swprofiles[a].kernel.deb " + (dir.path() / "text.deb").string() +
                         ": expected a Debian kernel package with one boot/vmlinuz-* in it (dpkg-deb"));
  const std::string headers = make_deb(dir.path(), "linux-headers-9.9.9-test", {{"usr/src/h/Makefile", "all:\n"}});
  EXPECT_THAT(error_of_unpacking(headers, cache),
              StartsWith("swprofiles[a].kernel.deb " + headers +
                         ": expected a Debian kernel package with one boot/vmlinuz-* in it"));
  const std::string two = make_deb(dir.path(), "two-kernels",
                                   {{"boot/vmlinuz-1-test", "one"}, {"boot/vmlinuz-2-test", "two"}});
  EXPECT_THAT(error_of_unpacking(two, cache), HasSubstr(": expected a Debian kernel package with one boot/vmlinuz-*"));
  for (const auto& entry : fs::recursive_directory_iterator(cache)) {
    EXPECT_FALSE(entry.is_regular_file()) << entry.path() << " left behind";
  }
}

TEST(KernelPackage, OnlySutsThatBootAnImageGetTheImageInsteadOfThePackage) {
  TempDir dir;
  const std::string deb = make_deb(dir.path(), "linux-image-9.9.9-test", {{"boot/vmlinuz-9.9.9-test", "image"}});
  const std::string cache = (dir.path() / "cache").string();
  const std::string profiles = "swprofiles:\n  - {name: a, kernel: {deb: " + deb +
                               "}}\n  - {name: b, kernel: {deb: " + deb + "}}\nbenchmarks: [syscall/getppid]\n";
  kbench::plan::Plan qemu =
      kbench::plan::parse_plan("sut: {name: vm, connection: {method: qemu}}\n" + profiles, "qemu.yaml");
  unpack_deb_kernels(qemu, {"a"}, cache);
  EXPECT_EQ(read_file(qemu.swprofiles[0].kernel.image), "image");
  EXPECT_EQ(qemu.swprofiles[0].kernel.deb, "");
  // Not selected: left as it is.
  EXPECT_EQ(qemu.swprofiles[1].kernel.deb, deb);
  EXPECT_EQ(qemu.swprofiles[1].kernel.image, "");

  kbench::plan::Plan ssh = kbench::plan::parse_plan(
      "sut: {name: lab, connection: {method: ssh, params: {host: lab1}}, boot: {method: kexec}}\n" + profiles,
      "ssh.yaml");
  unpack_deb_kernels(ssh, {}, cache);
  EXPECT_EQ(ssh.swprofiles[0].kernel.deb, deb);
  EXPECT_EQ(ssh.swprofiles[0].kernel.image, "");
}
