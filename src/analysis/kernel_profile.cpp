#include "analysis/kernel_profile.h"

#include <algorithm>
#include <cmath>

namespace kbench::analysis {

ProfileSum sum_profiles(const std::vector<store::StoredKernelProfile>& profiles) {
  ProfileSum sum;
  for (const auto& stored : profiles) {
    const auto& profile = stored.profile;
    ++sum.sessions;
    if (profile.unavailable) {
      if (std::find(sum.unavailable.begin(), sum.unavailable.end(), *profile.unavailable) == sum.unavailable.end()) {
        sum.unavailable.push_back(*profile.unavailable);
      }
      continue;
    }
    if (sum.period_ns == 0) sum.period_ns = profile.period_ns;
    sum.samples += profile.samples;
    sum.lost += profile.lost;
    sum.unresolved += profile.unresolved;
    sum.unlisted += profile.unlisted;
    for (const auto& [function, count] : profile.functions) sum.functions[function] += count;
  }
  return sum;
}

std::vector<FunctionShift> function_shifts(const ProfileSum& a, const ProfileSum& b) {
  std::map<std::string, FunctionShift> by_name;
  const auto share = [](std::uint64_t count, std::uint64_t total) { return total ? double(count) / double(total) : 0.0; };
  for (const auto& [function, count] : a.functions) {
    auto& shift = by_name[function];
    shift.samples_a = count;
    shift.share_a = share(count, a.samples);
  }
  for (const auto& [function, count] : b.functions) {
    auto& shift = by_name[function];
    shift.samples_b = count;
    shift.share_b = share(count, b.samples);
  }
  std::vector<FunctionShift> shifts;
  for (auto& [function, shift] : by_name) {
    shift.function = function;
    shifts.push_back(std::move(shift));
  }
  std::stable_sort(shifts.begin(), shifts.end(), [](const FunctionShift& x, const FunctionShift& y) {
    return std::abs(x.change()) > std::abs(y.change());
  });
  return shifts;
}

}  // namespace kbench::analysis
