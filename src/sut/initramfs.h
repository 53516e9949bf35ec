#pragma once
// A newc cpio archive built in memory: what the kernel unpacks as its
// initramfs. Written here so that no cpio tool is needed on the controller.
#include <cstdint>
#include <string>

namespace kbench::sut {

class CpioWriter {
 public:
  void add_directory(const std::string& path);
  void add_file(const std::string& path, const std::string& contents, std::uint32_t mode);
  void add_symlink(const std::string& path, const std::string& target);
  // The archive with its trailer; the writer must not be used afterwards.
  std::string finish();

 private:
  void add_entry(const std::string& path, std::uint32_t mode, const std::string& data);
  std::string archive_;
  std::uint32_t next_inode_ = 1;
};

// CRC-32 (the zlib / busybox crc32 polynomial) of `bytes`, as 8 lower-case hex digits.
std::string crc32_hex(const std::string& bytes);

// The /init of the qemu method's initramfs for a guest of architecture `arch`
// (x86_64 | aarch64), from assets/sut/init_*.sh (defined in qemu.cpp).
std::string qemu_init(const std::string& arch);

}  // namespace kbench::sut
