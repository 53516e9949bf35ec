#include "deploy/kernel_identity.h"

#include <zlib.h>

#include <cstdint>

namespace kbench::deploy {

namespace {

// x86 boot protocol: "HdrS" at 0x202, protocol >= 2.00, and a pointer at
// 0x20e to the kernel_version string, relative to 0x200.
std::optional<std::string> bzimage_version_string(const std::string& bytes) {
  if (bytes.size() < 0x210 || bytes.compare(0x202, 4, "HdrS") != 0) return std::nullopt;
  const auto byte = [&](std::size_t at) { return static_cast<std::uint8_t>(bytes[at]); };
  const std::size_t offset = (byte(0x20e) | byte(0x20f) << 8) + 0x200;
  if (offset >= bytes.size()) return std::nullopt;
  const std::size_t end = bytes.find('\0', offset);
  if (end == std::string::npos || end == offset) return std::nullopt;
  return bytes.substr(offset, end - offset);
}

// "REL (builder) VERSION" with balanced parentheses skipped after REL.
std::optional<KernelIdentity> split_release_and_version(const std::string& text) {
  const std::size_t space = text.find(' ');
  if (space == std::string::npos || space == 0) return std::nullopt;
  KernelIdentity identity;
  identity.release = text.substr(0, space);
  std::size_t at = space + 1;
  while (at < text.size() && text[at] == '(') {
    int depth = 0;
    std::size_t i = at;
    for (; i < text.size(); ++i) {
      if (text[i] == '(') ++depth;
      if (text[i] == ')' && --depth == 0) break;
    }
    if (i >= text.size()) return std::nullopt;
    at = i + 1;
    while (at < text.size() && text[at] == ' ') ++at;
  }
  identity.version = text.substr(at);
  while (!identity.version.empty() && (identity.version.back() == '\n' || identity.version.back() == ' ')) {
    identity.version.pop_back();
  }
  if (identity.version.empty()) return std::nullopt;
  return identity;
}

std::optional<KernelIdentity> banner_in(const std::string& bytes) {
  static const std::string kBanner = "Linux version ";
  for (std::size_t at = bytes.find(kBanner); at != std::string::npos; at = bytes.find(kBanner, at + 1)) {
    const std::size_t end = bytes.find_first_of(std::string("\n\0", 2), at);
    if (end == std::string::npos) continue;
    if (auto identity = identity_of_banner(bytes.substr(at, end - at))) return identity;
  }
  return std::nullopt;
}

// The first gzip member of `bytes`, inflated up to `limit` bytes.
std::optional<std::string> gunzip(const std::string& bytes, std::size_t limit) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return std::nullopt;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buffer[1 << 16];
  int status = Z_OK;
  while (status == Z_OK && out.size() < limit) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - stream.avail_out);
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END && status != Z_OK) return std::nullopt;
  return out;
}

}  // namespace

std::optional<KernelIdentity> identity_of_banner(const std::string& text) {
  static const std::string kBanner = "Linux version ";
  if (text.rfind(kBanner, 0) != 0) return std::nullopt;
  return split_release_and_version(text.substr(kBanner.size()));
}

std::optional<KernelIdentity> identity_of_image(const std::string& image_bytes) {
  if (const auto version = bzimage_version_string(image_bytes)) return split_release_and_version(*version);
  if (image_bytes.size() > 2 && static_cast<std::uint8_t>(image_bytes[0]) == 0x1f &&
      static_cast<std::uint8_t>(image_bytes[1]) == 0x8b) {
    // An arm64 Image.gz: the banner is inside. Kernels are far below 512 MiB.
    if (const auto inflated = gunzip(image_bytes, std::size_t{512} << 20)) return banner_in(*inflated);
    return std::nullopt;
  }
  return banner_in(image_bytes);
}

}  // namespace kbench::deploy
