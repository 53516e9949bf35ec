#pragma once
// What the memory-management families (perf/mem, micromm, lat-mem-rd) ask of the kernel
// about transparent hugepages, and how they spell sizes in result classes.
#include <sys/mman.h>

#include <cstdint>
#include <string>

// Linux 5.14; older C library headers lack the name.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace kbench::bench::mm {

inline constexpr std::uint64_t kKiB = 1ull << 10;
inline constexpr std::uint64_t kMiB = 1ull << 20;
inline constexpr std::uint64_t kGiB = 1ull << 30;

// "1GB", "256MB", "4KB", "100B": the largest unit that divides exactly, the
// spelling perf's own command lines (and so the seed's result classes) use.
std::string size_label(std::uint64_t bytes);

// The first line of a (sysfs) file; "" when it cannot be read.
std::string read_first_line(const std::string& path);

// The THP mode in brackets, e.g. "madvise" from "always [madvise] never";
// "" without transparent hugepages.
std::string thp_mode();

// Fraction of `bytes` at `addr` backed by PMD mappings, from /proc/self/smaps.
double anon_huge_fraction(const void* addr, std::uint64_t bytes);

}  // namespace kbench::bench::mm
