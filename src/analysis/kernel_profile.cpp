#include "analysis/kernel_profile.h"

#include <algorithm>
#include <cmath>
#include <utility>

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

std::vector<FunctionShift> top_moves(std::vector<FunctionShift> shifts, ShareMove move, std::size_t top) {
  const auto moved = [move](const FunctionShift& shift) {
    return move == ShareMove::Gained ? shift.change() : -shift.change();
  };
  std::erase_if(shifts, [&](const FunctionShift& shift) { return !(moved(shift) > 0); });
  std::sort(shifts.begin(), shifts.end(), [&](const FunctionShift& x, const FunctionShift& y) {
    if (moved(x) != moved(y)) return moved(x) > moved(y);
    return x.function < y.function;
  });
  if (shifts.size() > top) shifts.resize(top);
  return shifts;
}

std::string kfunc_benchmark(const std::string& function) { return "kfunc/" + function.substr(0, function.find(' ')); }

std::optional<std::string> kfunc_workload(const std::string& benchmark) {
  // Each the loop of kfunc/'s workload of that name (benchmarks/kfunc.cpp).
  static const std::map<std::string, std::string> workloads{
      {"syscall/getppid", "getppid"},
      {"syscall/getpid", "getpid"},
      {"ctxsw/pipe-threads", kKfuncDefaultWorkload},
  };
  const auto it = workloads.find(benchmark);
  if (it == workloads.end()) return std::nullopt;
  return it->second;
}

std::string kfunc_command(const std::string& swprofile, const std::string& function, const std::string& benchmark) {
  const auto workload = kfunc_workload(benchmark);
  return "kbench run --swprofile " + swprofile + " --benchmark " + kfunc_benchmark(function) +
         (workload && *workload != kKfuncDefaultWorkload ? " --param workload=" + *workload : "");
}

std::string kfunc_compare_command(const std::string& base, const std::string& test, const std::string& function) {
  return "kbench compare " + base + " " + test + " --benchmark " + kfunc_benchmark(function);
}

std::vector<std::string> kfunc_commands(const std::string& base, const std::string& test, const std::string& function,
                                        const std::string& benchmark) {
  return {kfunc_command(base, function, benchmark), kfunc_command(test, function, benchmark),
          kfunc_compare_command(base, test, function)};
}

std::vector<KfuncCandidate> kfunc_candidates(const Report& report, std::size_t per_shift,
                                             std::vector<std::string>& without_workload) {
  std::vector<KfuncCandidate> candidates;
  for (const Table& table : report.tables) {
    for (const KernelTimeShift& shift : table.kernel_time) {
      if (shift.verdict != Verdict::Regression || shift.functions.empty()) continue;
      const auto workload = kfunc_workload(shift.benchmark);
      if (!workload) {
        if (std::find(without_workload.begin(), without_workload.end(), shift.benchmark) == without_workload.end()) {
          without_workload.push_back(shift.benchmark);
        }
        continue;
      }
      for (std::size_t f = 0; f < std::min(per_shift, shift.functions.size()); ++f) {
        KfuncCandidate candidate{shift.functions[f].function, kfunc_benchmark(shift.functions[f].function), *workload,
                                 shift.benchmark};
        const bool known = std::any_of(candidates.begin(), candidates.end(), [&](const KfuncCandidate& other) {
          return other.benchmark == candidate.benchmark && other.workload == candidate.workload;
        });
        if (!known) candidates.push_back(std::move(candidate));
      }
    }
  }
  return candidates;
}

std::vector<std::string> none_slower_lines(const std::vector<KfuncCandidate>& candidates, const std::string& base,
                                           const std::string& test) {
  // Under TCG an interrupt is taken between translated blocks, so a sample
  // in slow code may be charged to the code after it: the functions whose
  // share grew need not be the one that got slower.
  std::map<std::string, std::string> workloads;  // profiled benchmark -> kfunc/'s workload
  for (const auto& candidate : candidates) workloads.emplace(candidate.profiled, candidate.workload);
  std::vector<std::string> lines;
  for (const auto& [benchmark, workload] : workloads) {
    lines.push_back("none of them got slower in its own time: their shares grew because time was added elsewhere "
                    "(`kbench profile " + base + " " + test + " --benchmark " + benchmark +
                    " --top 20` lists more functions; `--benchmark kfunc/<function> --param workload=" + workload +
                    "` times one)");
  }
  return lines;
}

bool rough_shares(std::uint64_t samples_a, std::uint64_t samples_b) {
  return std::min(samples_a, samples_b) < kRoughShareSamples;
}

namespace {

// The stored profiles a report reads, each (swprofile, benchmark) once, and
// the sessions they belong to, read at the first marked cell (a report
// without marks reads nothing).
class StoredProfiles {
 public:
  StoredProfiles(store::ResultStore& store, std::vector<std::string> swprofiles,
                 const std::optional<std::set<std::int64_t>>& only_sessions)
      : store_(store), swprofiles_(std::move(swprofiles)), only_sessions_(only_sessions) {}

  // The profiles of `benchmark` with `params` in the sessions of
  // `swprofile` that `table` holds, summed.
  ProfileSum sum(const Table& table, const std::string& swprofile, const std::string& benchmark,
                 const Params& params) {
    if (!sessions_read_) {
      for (auto& listed : store_.list_sessions(swprofiles_)) sessions_.emplace(listed.id, std::move(listed));
      sessions_read_ = true;
    }
    auto key = std::pair(swprofile, benchmark);
    auto cached = read_.find(key);
    if (cached == read_.end()) cached = read_.emplace(key, store_.kernel_profiles(swprofile, benchmark)).first;
    std::vector<store::StoredKernelProfile> held;
    for (const auto& profile : cached->second) {
      const auto session = sessions_.find(profile.session);
      if (profile.benchmark.params != params || session == sessions_.end()) continue;
      if (only_sessions_ && !only_sessions_->count(profile.session)) continue;
      if (table.holds(session->second.sut, session->second.sut_class)) held.push_back(profile);
    }
    return sum_profiles(held);
  }

 private:
  store::ResultStore& store_;
  std::vector<std::string> swprofiles_;
  const std::optional<std::set<std::int64_t>>& only_sessions_;
  bool sessions_read_ = false;
  std::map<std::int64_t, store::SessionListing> sessions_;
  std::map<std::pair<std::string, std::string>, std::vector<store::StoredKernelProfile>> read_;
};

// "patched: perf_event_open refused ..." for a side whose every profile is
// unavailable; "" otherwise.
std::string unavailable_side(const std::string& swprofile, const ProfileSum& sum) {
  if (sum.samples > 0 || sum.unavailable.empty()) return "";
  std::string reasons;
  for (const std::string& reason : sum.unavailable) reasons += (reasons.empty() ? "" : "; ") + reason;
  return swprofile + ": " + reasons;
}

// The table's kfunc/ row that timed `function` under `profiled`'s workload
// (kfunc/'s default, the ping-pong, for a benchmark without one), present in
// `column`: its change and verdict.
std::optional<FunctionShift::Timing> kfunc_timing(const Table& table, const std::string& function,
                                                  const Row& profiled, std::size_t column) {
  const std::string benchmark = kfunc_benchmark(function);
  const std::string workload = kfunc_workload(profiled.benchmark).value_or(kKfuncDefaultWorkload);
  for (const Row& row : table.rows) {
    if (row.benchmark != benchmark || row.result_class.label() != kKfuncTimePerCall) continue;
    const auto it = row.params.find("workload");
    if ((it == row.params.end() ? std::string(kKfuncDefaultWorkload) : it->second) != workload) continue;
    if (column >= row.cells.size() || !row.cells[column].present || !row.base_present) continue;
    return FunctionShift::Timing{row.cells[column].change_pct, row.cells[column].verdict};
  }
  return std::nullopt;
}

KernelTimeShift kernel_time_shift(const Table& table, const Row& row, std::size_t column, Verdict verdict,
                                  const ProfileSum& base, const ProfileSum& test) {
  KernelTimeShift shift{.benchmark = row.benchmark,
                        .params = row.params,
                        .column = column,
                        .verdict = verdict,
                        .base_sessions = base.sessions,
                        .test_sessions = test.sessions,
                        .base_samples = base.samples,
                        .test_samples = test.samples};
  const std::string& test_profile = table.test_profiles[column];
  for (const std::string& side : {unavailable_side(table.base_profile, base), unavailable_side(test_profile, test)})
    if (!side.empty()) shift.unavailable += (shift.unavailable.empty() ? "" : "; ") + side;
  if (!shift.unavailable.empty()) return shift;
  const ShareMove move = verdict == Verdict::Regression ? ShareMove::Gained : ShareMove::Lost;
  shift.functions = top_moves(function_shifts(base, test), move, kKernelTimeShiftFunctions);
  for (FunctionShift& function : shift.functions) function.timed = kfunc_timing(table, function.function, row, column);
  if (!shift.functions.empty()) {
    shift.kfunc_commands =
        kfunc_commands(table.base_profile, test_profile, shift.functions.front().function, row.benchmark);
  }
  return shift;
}

}  // namespace

void add_kernel_time_shifts(Report& report, store::ResultStore& store,
                            const std::optional<std::set<std::int64_t>>& only_sessions) {
  std::vector<std::string> swprofiles;
  for (const Table& table : report.tables) {
    swprofiles.push_back(table.base_profile);
    swprofiles.insert(swprofiles.end(), table.test_profiles.begin(), table.test_profiles.end());
  }
  std::sort(swprofiles.begin(), swprofiles.end());
  swprofiles.erase(std::unique(swprofiles.begin(), swprofiles.end()), swprofiles.end());
  StoredProfiles stored(store, std::move(swprofiles), only_sessions);
  for (Table& table : report.tables) {
    for (const Row& row : table.rows) {
      for (std::size_t column = 0; column < row.cells.size() && column < table.test_profiles.size(); ++column) {
        const Verdict verdict = row.cells[column].verdict;
        if (verdict != Verdict::Regression && verdict != Verdict::Improvement) continue;
        // The profile is the benchmark's, whichever of its result classes is marked.
        const bool listed = std::any_of(table.kernel_time.begin(), table.kernel_time.end(), [&](const auto& shift) {
          return shift.benchmark == row.benchmark && shift.params == row.params && shift.column == column &&
                 shift.verdict == verdict;
        });
        if (listed) continue;
        const ProfileSum base = stored.sum(table, table.base_profile, row.benchmark, row.params);
        const ProfileSum test = stored.sum(table, table.test_profiles[column], row.benchmark, row.params);
        if (base.sessions == 0 || test.sessions == 0) continue;
        table.kernel_time.push_back(kernel_time_shift(table, row, column, verdict, base, test));
      }
    }
  }
}

}  // namespace kbench::analysis
