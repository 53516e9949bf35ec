// kbench profile: where a benchmark's kernel time moved between two
// swprofiles, from the kernel profiles `kbench run --kernel-profile` stored.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fnmatch.h>

#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "analysis/kernel_profile.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/kernel_time.h"
#include "store/result_store.h"
#include "store/store_text.h"

namespace kbench::cli {

namespace {

struct ProfileOptions {
  std::vector<std::string> profiles;
  std::string benchmark;
  std::optional<int> top;
  std::string sut_glob;
  std::string store_url;
};

// What the profiles of both sides must agree on, gathered as each side is read.
struct ProfilesSeen {
  std::set<std::string> params;
  std::set<std::string> suts;
};

constexpr int kDefaultTop = 20;

std::string percent(double share) { return fmt::format("{:.1f} %", 100 * share); }

std::string side_summary(const std::string& name, const analysis::ProfileSum& sum) {
  std::string text = fmt::format("{}: {} session{}, {} kernel samples", name, sum.sessions,
                                 sum.sessions == 1 ? "" : "s", sum.samples);
  if (sum.unresolved) text += fmt::format(" ({} at no known symbol)", sum.unresolved);
  if (sum.lost) text += fmt::format(", {} lost", sum.lost);
  return text;
}

// The profiles of one side on the SUTs `sut_glob` matches (all when empty);
// none at all, or only unavailable ones, end the command with the reason.
analysis::ProfileSum side(const OpenedStore& opened, const ProfileOptions& options, const std::string& swprofile,
                          const std::map<std::int64_t, std::string>& sut_of_session, ProfilesSeen& seen) {
  const auto stored = opened.store->kernel_profiles(swprofile, options.benchmark);
  if (stored.empty()) {
    throw InputError(fmt::format("swprofile '{}' has no kernel profile of {} in {} (run it with kbench run "
                                 "--kernel-profile, or the plan setting kernel_profile: true)",
                                 swprofile, options.benchmark, opened.url));
  }
  std::vector<store::StoredKernelProfile> profiles;
  std::set<std::string> suts_elsewhere;
  for (const auto& profile : stored) {
    const auto sut = sut_of_session.find(profile.session);
    const std::string name = sut == sut_of_session.end() ? std::string() : sut->second;
    if (!options.sut_glob.empty() && fnmatch(options.sut_glob.c_str(), name.c_str(), 0) != 0) {
      suts_elsewhere.insert(name);
      continue;
    }
    seen.params.insert(store::canonical_params(profile.benchmark.params));
    seen.suts.insert(name);
    profiles.push_back(profile);
  }
  if (profiles.empty()) {
    throw InputError(fmt::format("--sut {}: swprofile '{}' has no kernel profile of {} on a matching SUT "
                                 "(its profiles are from {})",
                                 options.sut_glob, swprofile, options.benchmark, fmt::join(suts_elsewhere, ", ")));
  }
  auto sum = analysis::sum_profiles(profiles);
  if (sum.samples == 0 && !sum.unavailable.empty()) {
    throw RunError(fmt::format("{}: profile unavailable: {}", swprofile, sum.unavailable.front()));
  }
  return sum;
}

void print_profile(const ProfileOptions& options) {
  if (options.profiles.size() != 2) {
    throw InputError(fmt::format("profile: expected two swprofiles, BASE TEST, got {}", options.profiles.size()));
  }
  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, options.profiles, KnownProfiles::List);
  const auto& [name_a, name_b] = std::pair(options.profiles[0], options.profiles[1]);
  std::map<std::int64_t, std::string> sut_of_session;
  for (const auto& session : opened.store->list_sessions(options.profiles)) sut_of_session[session.id] = session.sut;
  ProfilesSeen seen;
  const auto a = side(opened, options, name_a, sut_of_session, seen);
  const auto b = side(opened, options, name_b, sut_of_session, seen);
  // Two machines' profiles summed would mix their kernels' and CPUs' costs.
  if (seen.suts.size() > 1) {
    throw InputError(fmt::format("--benchmark {}: the kernel profiles of {} and {} come from {} SUTs ({}); "
                                 "choose one with --sut",
                                 options.benchmark, name_a, name_b, seen.suts.size(), fmt::join(seen.suts, ", ")));
  }
  if (seen.params.size() > 1) {
    throw InputError(fmt::format("--benchmark {}: profiled with {} parameter sets ({}); profiles of different "
                                 "parameters are not comparable",
                                 options.benchmark, seen.params.size(), fmt::join(seen.params, ", ")));
  }

  std::cout << fmt::format("Kernel profile of {}: share of the kernel samples per function, the largest change "
                           "first (one sample every {} us of CPU time in the kernel)\n",
                           options.benchmark, a.period_ns / 1000.0);
  std::cout << side_summary(name_a, a) << "\n" << side_summary(name_b, b) << "\n";
  if (analysis::rough_shares(a.samples, b.samples)) {
    std::cout << report::rough_shares_note(a.samples, b.samples) << "\n";
  }
  std::cout << "\n";
  const int width = 40;
  std::cout << fmt::format("{:<{}} {:>10} {:>8} {:>10} {:>8} {:>10}\n", "function", width, name_a + " n",
                           name_a + " %", name_b + " n", name_b + " %", "change");
  const auto shifts = analysis::function_shifts(a, b);
  const std::size_t shown = std::min<std::size_t>(shifts.size(), std::size_t(options.top.value_or(kDefaultTop)));
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& shift = shifts[i];
    std::cout << fmt::format("{:<{}} {:>10} {:>8} {:>10} {:>8} {:>+8.1f}pp\n", shift.function, width,
                             shift.samples_a, percent(shift.share_a), shift.samples_b, percent(shift.share_b),
                             100 * shift.change());
  }
  if (shown == 0) return;
  // Where the extra time went: the largest change may be a function that
  // lost share because another one took it.
  const auto gained = analysis::top_moves(shifts, analysis::ShareMove::Gained, 1);
  if (gained.empty()) {
    std::cout << fmt::format("\nNo function gained share from {} to {}: none to time.\n", name_a, name_b);
    return;
  }
  std::cout << fmt::format("\nGained the most share: {} ({:+.1f}pp). Time it on both swprofiles, then compare:\n",
                           gained.front().function, 100 * gained.front().change());
  for (const std::string& command : analysis::kfunc_commands(name_a, name_b, gained.front().function, options.benchmark)) {
    std::cout << "  " << command << "\n";
  }
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto options = std::make_shared<ProfileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Where a benchmark's kernel time moved between two swprofiles (runs with --kernel-profile)");
  cmd->add_option("profiles", options->profiles, "BASE TEST: the two swprofiles")->required();
  cmd->add_option("--benchmark", options->benchmark, "the benchmark, e.g. syscall/getppid")->required();
  add_integer_option(*cmd, "--top", options->top, 1, 100000,
                     "functions shown, the largest change of share first (default 20)");
  add_glob_option(*cmd, "--sut", options->sut_glob,
                  "only SUTs matching this glob; needed when the profiles come from several");
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench run --swprofile base --benchmark syscall/getppid --kernel-profile\n"
      "  kbench run --swprofile patched --benchmark syscall/getppid --kernel-profile\n"
      "  kbench profile base patched --benchmark syscall/getppid --top 10\n"
      "  kbench profile base patched --benchmark syscall/getppid --sut lab-1\n"
      "Shares are of all kernel samples of a swprofile's sessions on one SUT, summed; a function whose share\n"
      "grew is where the extra kernel time went (kfunc/<function> times it on both swprofiles).");
  cmd->callback([options] { print_profile(*options); });
}

}  // namespace kbench::cli
