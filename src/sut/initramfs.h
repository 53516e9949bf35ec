#pragma once
// A newc cpio archive built in memory: what the kernel unpacks as its
// initramfs. Written here so that no cpio tool is needed on the controller.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// CRC-32 (the zlib / busybox crc32 polynomial) of `bytes`.
std::uint32_t crc32(const std::string& bytes);
// The same as 8 lower-case hex digits.
std::string crc32_hex(const std::string& bytes);

// The /init of the qemu method's initramfs for a guest of architecture `arch`
// (x86_64 | aarch64), from assets/sut/init_*.sh (defined in qemu.cpp).
std::string qemu_init(const std::string& arch);
// The lava method's /init: the console is its results channel, and it ends
// in a shell whose prompt ends LAVA's boot action (defined in lava.cpp).
std::string lava_init();

// Frames on a results channel, as assets/sut/init_run.sh writes them:
// "<tag> <crc32 of payload> <payload>", tags KBS1 (init started), KBO1
// (agent stdout line), KBE1 (agent stderr line), KBX1 (agent exit status).
struct ResultFrame {
  std::string tag;
  std::string payload;
  bool valid = false;  // the checksum matches
};

// A line of the results channel; nullopt when it holds no frame. Anything
// before "KB" is skipped (a console prompt or a log prefix).
std::optional<ResultFrame> parse_result_frame(std::string line);

// sut.connection.params.arch's value as uname -m spells it: x86_64 or
// aarch64 (amd64 and arm64 accepted); nullopt for another.
std::optional<std::string> known_guest_arch(const std::string& value);
// The same; throws InputError for another.
std::string guest_arch(const std::string& value);
// What an arch of no known guest is told: "x86_64 or aarch64, got 'VALUE'".
std::string expected_guest_arch(const std::string& value);

// The busybox of the initramfs runs as the guest's /init: throws InputError
// unless `busybox` (sut.connection.params.busybox) is readable and built for
// `arch`.
void require_busybox_for(const std::string& busybox, const std::string& arch);

// Throws InputError unless the swprofile's kernel image `kernel` is readable:
// a connection that boots it says so before it starts anything.
void require_readable_image(const std::string& kernel);

// The archive every boot of one kernel shares: busybox as bin/busybox,
// `init`, the agent as kbench/kbench-agent and, when the kernel is a Debian
// vmlinuz-X with config-X beside it, that config under boot/ (the agent
// records its hash as on a real machine). `initrd`, when set, comes first
// (the kernel unpacks concatenated archives); `modules`, when set, last (see
// modules_archive). Throws InputError for a file that cannot be read.
std::string agent_initramfs(const std::string& busybox, const std::string& init, const std::string& agent_path,
                            const std::string& kernel, const std::string& initrd, const std::string& modules = {});
// A swprofile's modules tarball (lib/modules/RELEASE/..., as `make
// modules_install INSTALL_MOD_PATH=DIR` leaves it and kbench's build packs
// it; gzip, xz or zstd compressed or not) as an archive of that tree, so a
// kernel booted with kbench's initramfs finds its modules where modprobe
// and depmod look. The tree lives in the guest's memory: keep it to the
// modules the benchmarks need. Throws InputError for a file that is not such
// a tarball.
std::string modules_archive(const std::string& tarball);
// `base` followed by an archive holding kbench/args for `args`.
std::string with_agent_args(std::string base, const std::vector<std::string>& args);

}  // namespace kbench::sut
