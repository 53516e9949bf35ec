#include "common/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "common/errors.h"

namespace kbench {

namespace {

std::optional<int> parse_cpu(std::string_view text) {
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > kMaxCpu) return std::nullopt;
  return value;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text, std::string_view what) {
  const auto bad = [&] {
    return InputError(std::string(what) + " '" + std::string(text) + "': expected a CPU list such as 0 or 0,2-3");
  };
  // /sys files end in a newline.
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const auto dash = item.find('-');
    const auto first = parse_cpu(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_cpu(item.substr(dash + 1));
    if (!first || !last || *last < *first) throw bad();
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out.push_back(',');
    out.append(std::to_string(cpus[i]));
    if (j > i) {
      out.push_back('-');
      out.append(std::to_string(cpus[j]));
    }
    i = j + 1;
  }
  return out;
}

void require_cpus(const std::vector<int>& wanted, const std::vector<int>& available, std::string_view what,
                  std::string_view text, std::string_view whose) {
  for (const int cpu : wanted) {
    if (std::find(available.begin(), available.end(), cpu) == available.end()) {
      throw InputError(std::string(what) + " '" + std::string(text) + "': CPU " + std::to_string(cpu) +
                       " is not one of " + std::string(whose) + " (" + format_cpu_list(available) + ")");
    }
  }
}

}  // namespace kbench
