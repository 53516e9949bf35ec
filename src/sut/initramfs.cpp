#include "sut/initramfs.h"

#include <sys/stat.h>

#include <array>
#include <fmt/format.h>

namespace kbench::sut {

namespace {

void pad_to_4(std::string& bytes) {
  while (bytes.size() % 4 != 0) bytes.push_back('\0');
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

}  // namespace kbench::sut
