#include "build/kernel_package.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "common/errors.h"
#include "process/process.h"
#include "sut/method.h"
#include "sysinfo/sha256.h"

namespace kbench::build {

namespace fs = std::filesystem;

namespace {

// The one vmlinuz-* directly in `dir`; "" when there is none or more.
std::string only_image_in(const fs::path& dir) {
  std::error_code ec;
  std::string found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().rfind("vmlinuz-", 0) != 0) continue;
    if (!found.empty()) return "";
    found = entry.path().string();
  }
  return found;
}

// dpkg-deb's or tar's first line of complaint.
std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return text.substr(0, end);
}

}  // namespace

std::string kernel_image_of_deb(const std::string& deb, const std::string& profile_name,
                                const std::string& cache_dir) {
  const std::string at = fmt::format("swprofiles[{}].kernel.deb {}", profile_name, deb);
  if (!std::ifstream(deb, std::ios::binary)) throw InputError(at + ": expected a readable Debian kernel package");
  const fs::path dest = fs::path(cache_dir) / "deb" / sysinfo::file_sha256(deb);
  if (const std::string image = only_image_in(dest); !image.empty()) return image;

  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (ec) throw RunError("cannot create " + dest.parent_path().string() + ": " + ec.message());
  const fs::path unpack = dest.string() + fmt::format(".unpack-{}", getpid());
  fs::remove_all(unpack, ec);
  fs::create_directories(unpack, ec);
  if (ec) throw RunError("cannot create " + unpack.string() + ": " + ec.message());
  // Only the image: the data archive of a kernel package is mostly modules.
  const auto result = process::run_command(
      {"sh", "-c", "dpkg-deb --fsys-tarfile \"$1\" | tar -x -C \"$2\" --wildcards './boot/vmlinuz-*'", "sh", deb,
       unpack.string()},
      "", std::chrono::minutes(5));
  const std::string image = only_image_in(unpack / "boot");
  if (image.empty()) {
    fs::remove_all(unpack, ec);
    const std::string why = result.timed_out ? "dpkg-deb took more than 5 minutes" : first_line(result.err);
    throw InputError(fmt::format("{}: expected a Debian kernel package with one boot/vmlinuz-* in it{}", at,
                                 why.empty() ? "" : " (" + why + ")"));
  }
  const fs::path kept = unpack / fs::path(image).filename();
  fs::rename(image, kept, ec);
  fs::remove_all(unpack / "boot", ec);
  // Whole or not at all: another kbench unpacking the same package at once
  // keeps its own copy when this one is in place first.
  fs::rename(unpack, dest, ec);
  if (ec) fs::remove_all(unpack, ec);
  const std::string in_place = only_image_in(dest);
  if (in_place.empty()) {
    throw RunError(fmt::format("unpacking the kernel image of {} into {} failed", deb, dest.string()));
  }
  return in_place;
}

void unpack_deb_kernels(plan::Plan& plan, const std::vector<std::string>& selected, const std::string& cache_dir) {
  std::vector<const plan::SutSpec*> suts;
  if (plan.sut) suts.push_back(&*plan.sut);
  for (const auto& sut : plan.suts) suts.push_back(&sut);
  const auto boots_images = [](const plan::SutSpec* sut) {
    const sut::Method& method = plan::sut_method(*sut);
    return method.has(sut::Capability::BootsKernel) && !method.has(sut::Capability::Modules);
  };
  if (suts.empty() || !std::all_of(suts.begin(), suts.end(), boots_images)) return;
  for (auto& profile : plan.swprofiles) {
    if (profile.kernel.deb.empty()) continue;
    if (!selected.empty() && std::find(selected.begin(), selected.end(), profile.name) == selected.end()) continue;
    profile.kernel.image = kernel_image_of_deb(profile.kernel.deb, profile.name, cache_dir);
    profile.kernel.deb.clear();
  }
}

}  // namespace kbench::build
