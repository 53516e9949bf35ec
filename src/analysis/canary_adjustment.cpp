#include "analysis/canary_adjustment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>

#include "common/errors.h"

namespace kbench::analysis {

Adjustment parse_adjustment(const std::string& text) {
  if (text == "none") return Adjustment::None;
  if (text == "canary") return Adjustment::Canary;
  throw InputError("--adjust '" + text + "': expected none or canary");
}

SpeedScaling speed_scaling(std::string_view unit) {
  static constexpr std::array<std::string_view, 9> times{"ns", "usec", "us", "µs", "ms", "sec", "seconds",
                                                          "ticks", "cycles"};
  static constexpr std::array<std::string_view, 6> rates{"ops/sec", "ops/second", "msg/sec", "bytes/sec", "Mbps",
                                                          "ops/s"};
  for (std::string_view time : times)
    if (unit == time) return SpeedScaling::Time;
  for (std::string_view rate : rates)
    if (unit == rate) return SpeedScaling::Rate;
  return SpeedScaling::None;
}

SessionCanary session_canary(store::ResultStore& store) {
  store::SampleQuery query;
  query.benchmark_glob = std::string(kCanaryBenchmark);
  query.resultclass_glob = std::string(kCanaryClass);
  query.settled_only = true;
  std::map<std::int64_t, std::pair<double, int>> sums;
  store.for_each_sample(query, [&](const store::SampleRow& row) {
    if (!(row.value > 0) || !std::isfinite(row.value)) return;
    auto& [sum, count] = sums[row.session];
    sum += row.value;
    ++count;
  });
  SessionCanary canary;
  for (const auto& [session, sum_count] : sums) canary[session] = sum_count.first / sum_count.second;
  return canary;
}

CanaryAdjusted adjust_by_canary(std::vector<store::SampleRow>& samples, const SessionCanary& canary,
                                const std::set<std::string>& compared) {
  CanaryAdjusted adjusted;
  std::map<std::string, std::set<int>> missing;  // compared profile -> session numbers
  std::set<std::int64_t> dropped;
  std::erase_if(samples, [&](const store::SampleRow& row) {
    if (canary.count(row.session)) return false;
    if (compared.count(row.swprofile)) {
      missing[row.swprofile].insert(row.session_number());
      return false;
    }
    dropped.insert(row.session);
    return true;
  });
  if (!missing.empty()) {
    std::string named;
    for (const auto& [profile, numbers] : missing)
      named += fmt::format("{}{} session {}", named.empty() ? "" : "; ", profile, fmt::join(numbers, ", "));
    throw InputError(fmt::format("--adjust canary: {} measured no {} ({}): measure it in every session of the "
                                 "compared swprofiles (--benchmark '{}' beside the others), or --adjust none",
                                 named, kCanaryBenchmark, kCanaryClass, kCanaryBenchmark));
  }
  // The reference speed of each SUT: the geometric mean of its sessions' canaries.
  std::map<std::string, std::map<std::int64_t, double>> by_sut;
  for (const auto& row : samples) by_sut[row.sut].emplace(row.session, canary.at(row.session));
  std::map<std::string, double> reference;
  for (const auto& [sut, sessions] : by_sut) {
    double log_sum = 0;
    for (const auto& [session, value] : sessions) log_sum += std::log(value);
    reference[sut] = std::exp(log_sum / sessions.size());
    adjusted.sessions += static_cast<int>(sessions.size());
    adjusted.suts.insert(sut);
  }
  for (auto& row : samples) {
    if (row.benchmark == kCanaryBenchmark) continue;
    const double slowness = canary.at(row.session) / reference.at(row.sut);
    switch (speed_scaling(row.result_class.unit)) {
      case SpeedScaling::Time: row.value /= slowness; break;
      case SpeedScaling::Rate: row.value *= slowness; break;
      case SpeedScaling::None: break;
    }
  }
  adjusted.dropped_sessions = static_cast<int>(dropped.size());
  return adjusted;
}

std::string describe(const CanaryAdjusted& adjusted) {
  std::string line = fmt::format(
      "adjusted by the canary: times and rates of each of {} sessions scaled by its {} {} against the "
      "geometric mean of its SUT's ({}); canary rows and other units as measured",
      adjusted.sessions, kCanaryBenchmark, kCanaryClass, fmt::join(adjusted.suts, ", "));
  if (adjusted.dropped_sessions > 0)
    line += fmt::format("; {} sessions of other swprofiles without a canary left out", adjusted.dropped_sessions);
  return line;
}

}  // namespace kbench::analysis
