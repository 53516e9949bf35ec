#pragma once
// CPU lists as Linux writes them (/sys/devices/system/cpu/online, cpusets) and
// as --cpus takes them: "0,2-3". The one parser for the whole codebase.
#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// "0,2-3" -> {0, 2, 3}, ascending and without duplicates. Throws InputError
// "<what> '<text>': expected a CPU list such as 0 or 0,2-3" for anything else
// (empty items, descending ranges, CPU numbers beyond kMaxCpu).
std::vector<int> parse_cpu_list(std::string_view text, std::string_view what);

// {0, 2, 3} -> "0,2-3" (ascending input).
std::string format_cpu_list(const std::vector<int>& cpus);

// Throws InputError "<what> '<text>': CPU 99 is not one of <whose> (0-1)"
// naming the first of `wanted` missing from `available`.
void require_cpus(const std::vector<int>& wanted, const std::vector<int>& available, std::string_view what,
                  std::string_view text, std::string_view whose);

inline constexpr int kMaxCpu = 8191;

}  // namespace kbench
