#include "benchmarks/mm_probe.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace kbench::bench::mm {

std::string size_label(std::uint64_t bytes) {
  if (bytes != 0 && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + "GB";
  if (bytes != 0 && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "MB";
  if (bytes != 0 && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + "KB";
  return std::to_string(bytes) + "B";
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return line;
}

std::string thp_mode() {
  const std::string line = read_first_line("/sys/kernel/mm/transparent_hugepage/enabled");
  const auto open = line.find('[');
  const auto close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

double anon_huge_fraction(const void* addr, std::uint64_t bytes) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const auto start = reinterpret_cast<std::uintptr_t>(addr);
  bool in_vma = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    // A VMA header ("lo-hi perms offset dev:ino ..."), not a "Field: value" line.
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      in_vma = lo <= start && start < hi;
      continue;
    }
    if (in_vma && line.rfind("AnonHugePages:", 0) == 0) {
      const double kib = std::strtod(line.c_str() + std::strlen("AnonHugePages:"), nullptr);
      return kib * 1024.0 / static_cast<double>(bytes);
    }
  }
  return 0;
}

}  // namespace kbench::bench::mm
