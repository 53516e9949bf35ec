#include "sut/initramfs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "process/process.h"

namespace kbench::sut {

namespace {

void pad_to_4(std::string& bytes) {
  while (bytes.size() % 4 != 0) bytes.push_back('\0');
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

std::string crc32_hex(const std::string& bytes) {
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
  return fmt::format("{:08x}", crc ^ 0xFFFFFFFFu);
}

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

void require_readable_image(const std::string& kernel) {
  if (access(kernel.c_str(), R_OK) != 0) {
    throw InputError("swprofile kernel " + kernel + ": expected a readable kernel image");
  }
}

std::string agent_initramfs(const std::string& busybox, const std::string& init, const std::string& agent_path,
                            const std::string& kernel, const std::string& initrd) {
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
  if (!initrd.empty()) archive = read_whole(initrd, "swprofile initrd") + archive;
  return archive;
}

std::string with_agent_args(std::string base, const std::vector<std::string>& args) {
  CpioWriter args_cpio;
  args_cpio.add_file("kbench/args", "set -- " + process::shell_join(args) + "\n", 0644);
  // The kernel skips the zero padding between concatenated archives.
  while (base.size() % 512 != 0) base.push_back('\0');
  return base + args_cpio.finish();
}

}  // namespace kbench::sut
