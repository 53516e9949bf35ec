#pragma once
// SHA-256 (FIPS 180-4), for fingerprinting files such as the kernel config
// without pulling a crypto library into the static agent.
#include <cstdint>
#include <string>
#include <string_view>

namespace kbench::sysinfo {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // Lower-case hex digest; the object must not be updated afterwards.
  std::string hex_digest();

 private:
  void compress(const unsigned char* block);
  std::uint32_t state_[8];
  unsigned char buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view bytes);

// The digest of a file's content, read in blocks (a kernel package is tens
// of megabytes); of nothing when it cannot be read.
std::string file_sha256(const std::string& path);

}  // namespace kbench::sysinfo
