#include "sut/initramfs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "common/elf_machine.h"
#include "common/errors.h"
#include "common/temp_directory.h"
#include "process/process.h"
#include "sut/connection.h"

namespace kbench::sut {

namespace {

void pad_to_4(std::string& bytes) {
  while (bytes.size() % 4 != 0) bytes.push_back('\0');
}

// Concatenated archives, as the kernel unpacks them: it skips the zero
// padding between them.
std::string followed_by(std::string first, const std::string& next) {
  while (first.size() % 512 != 0) first.push_back('\0');
  return first + next;
}

std::string read_whole(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + " " + path + ": cannot be read");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

void CpioWriter::add_entry(const std::string& path, std::uint32_t mode, const std::string& data) {
  // newc header: magic and 13 fields of 8 hex digits; name and data padded to 4.
  archive_ += fmt::format("070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
                          next_inode_++, mode, 0, 0, 1, 0, data.size(), 0, 0, 0, 0, path.size() + 1, 0);
  archive_ += path;
  archive_.push_back('\0');
  pad_to_4(archive_);
  archive_ += data;
  pad_to_4(archive_);
}

void CpioWriter::add_directory(const std::string& path) { add_entry(path, S_IFDIR | 0755, ""); }

void CpioWriter::add_file(const std::string& path, const std::string& contents, std::uint32_t mode) {
  add_entry(path, S_IFREG | mode, contents);
}

void CpioWriter::add_symlink(const std::string& path, const std::string& target) {
  add_entry(path, S_IFLNK | 0777, target);
}

std::string CpioWriter::finish() {
  next_inode_ = 0;
  add_entry("TRAILER!!!", 0, "");
  return std::move(archive_);
}

std::uint32_t crc32(const std::string& bytes) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string crc32_hex(const std::string& bytes) { return fmt::format("{:08x}", crc32(bytes)); }

std::optional<ResultFrame> parse_result_frame(std::string line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  const auto start = line.find("KB");
  if (start == std::string::npos) return std::nullopt;
  line.erase(0, start);
  if (line.size() < 14 || line[4] != ' ' || line[13] != ' ') return std::nullopt;
  ResultFrame frame{line.substr(0, 4), line.substr(14), false};
  if (frame.tag != "KBS1" && frame.tag != "KBO1" && frame.tag != "KBE1" && frame.tag != "KBX1") return std::nullopt;
  frame.valid = crc32_hex(frame.payload) == line.substr(5, 8);
  return frame;
}

std::optional<std::string> known_guest_arch(const std::string& value) {
  std::string arch = normalized_machine(value);
  if (arch != "x86_64" && arch != "aarch64") return std::nullopt;
  return arch;
}

std::string expected_guest_arch(const std::string& value) { return "x86_64 or aarch64, got '" + value + "'"; }

std::string guest_arch(const std::string& value) {
  auto arch = known_guest_arch(value);
  if (!arch) throw InputError("sut.connection.params.arch: expected " + expected_guest_arch(value));
  return *arch;
}

void require_busybox_for(const std::string& busybox, const std::string& arch) {
  const std::string hint = arch == "aarch64"
                               ? " (Debian busybox-static:arm64: apt-get download busybox-static:arm64; "
                                 "dpkg-deb -x busybox-static_*_arm64.deb DIR; busybox: DIR/bin/busybox)"
                               : " (Debian package busybox-static)";
  if (access(busybox.c_str(), R_OK) != 0) {
    throw InputError("sut.connection.params.busybox " + busybox + ": expected a readable static busybox for " + arch +
                     hint);
  }
  const std::string machine = elf_machine(busybox);
  if (machine != arch) {
    throw InputError("sut.connection.params.busybox " + busybox + ": expected a static busybox built for " + arch +
                     ", it is " + (machine.empty() ? "not an ELF executable" : "built for " + machine) + hint);
  }
}

void require_readable_image(const std::string& kernel) {
  if (access(kernel.c_str(), R_OK) != 0) {
    throw InputError("swprofile kernel " + kernel + ": expected a readable kernel image");
  }
}

std::string agent_initramfs(const std::string& busybox, const std::string& init, const std::string& agent_path,
                            const std::string& kernel, const std::string& initrd, const std::string& modules) {
  namespace fs = std::filesystem;
  CpioWriter cpio;
  for (const char* dir : {"bin", "dev", "proc", "sys", "tmp", "kbench", "boot"}) cpio.add_directory(dir);
  cpio.add_file("bin/busybox", read_whole(busybox, "busybox (Debian package busybox-static)"), 0755);
  cpio.add_file("init", init, 0755);
  cpio.add_file("kbench/kbench-agent", read_whole(agent_path, "kbench-agent"), 0755);
  const fs::path image(kernel);
  const std::string name = image.filename().string();
  if (name.rfind("vmlinuz-", 0) == 0) {
    const fs::path config = image.parent_path() / ("config-" + name.substr(8));
    if (fs::exists(config)) {
      cpio.add_file("boot/" + config.filename().string(), read_whole(config.string(), "kernel config"), 0644);
    }
  }
  std::string archive = cpio.finish();
  if (!initrd.empty()) archive = followed_by(read_whole(initrd, "swprofile initrd"), archive);
  if (!modules.empty()) archive = followed_by(std::move(archive), modules_archive(modules));
  return archive;
}

std::string modules_archive(const std::string& tarball) {
  namespace fs = std::filesystem;
  const std::string what = "swprofile kernel.modules " + tarball;
  if (access(tarball.c_str(), R_OK) != 0) throw InputError(what + ": expected a readable tarball of lib/modules/RELEASE/");
  const TempDirectory extraction("kbench-modules");
  const fs::path dir = extraction.path();
  // GNU tar recognises the compression by the bytes; ownership and modes
  // that root's tar would restore do not matter, the archive sets its own.
  const auto extracted = process::run_command({"tar", "-xf", tarball, "-C", dir.string(), "--no-same-owner"}, "",
                                              std::chrono::minutes(5));
  if (extracted.exit_status != 0) {
    const std::string why = extracted.timed_out ? "timed out after 5 minutes"
                            : !extracted.err.empty() ? process::last_lines(extracted.err, 1)
                                                     : fmt::format("exit status {}", extracted.exit_status);
    throw InputError(what + ": expected a tarball of lib/modules/RELEASE/ (tar: " + why + ")");
  }
  const fs::path modules = dir / "lib" / "modules";
  std::error_code ec;
  if (!fs::is_directory(modules, ec) || fs::is_empty(modules, ec)) {
    throw InputError(what + ": expected a tarball of lib/modules/RELEASE/ (it holds no lib/modules/ directory)");
  }
  // In a fixed order, so one tarball always makes the same archive.
  std::vector<fs::path> entries;
  for (auto it = fs::recursive_directory_iterator(modules); it != fs::recursive_directory_iterator(); ++it) {
    entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  CpioWriter cpio;
  cpio.add_directory("lib");
  cpio.add_directory("lib/modules");
  for (const fs::path& entry : entries) {
    const std::string name = entry.lexically_relative(dir).string();
    const auto status = fs::symlink_status(entry);
    if (fs::is_symlink(status)) {
      cpio.add_symlink(name, fs::read_symlink(entry).string());
    } else if (fs::is_directory(status)) {
      cpio.add_directory(name);
    } else if (fs::is_regular_file(status)) {
      cpio.add_file(name, read_whole(entry.string(), "module file"),
                    static_cast<std::uint32_t>(status.permissions() & fs::perms::mask));
    }
  }
  return cpio.finish();
}

std::string with_agent_args(std::string base, const std::vector<std::string>& args) {
  CpioWriter args_cpio;
  args_cpio.add_file("kbench/args", "set -- " + process::shell_join(args) + "\n", 0644);
  return followed_by(std::move(base), args_cpio.finish());
}

}  // namespace kbench::sut
