#include "analysis/environment.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <sstream>

#include "sysinfo/fingerprint_view.h"

namespace kbench::analysis {

namespace {

using nlohmann::json;
using sysinfo::FingerprintView;
namespace fingerprint_key = sysinfo::fingerprint_key;

// The fingerprint keys compared value by value, in the order they are listed.
constexpr const char* kKeys[] = {fingerprint_key::kKernelRelease, fingerprint_key::kThp,
                                 fingerprint_key::kGovernor,      fingerprint_key::kSmt,
                                 fingerprint_key::kMitigations,   fingerprint_key::kMicrocode,
                                 fingerprint_key::kClocksource,   fingerprint_key::kNoTurbo,
                                 fingerprint_key::kBoost,         fingerprint_key::kAslr,
                                 fingerprint_key::kSeccomp,       fingerprint_key::kDeviceTreeModel};

// Kernel parameters and the fingerprint keys they set: a swprofile that puts
// one on the command line declares what the fingerprint shows for that key.
const std::map<std::string, std::vector<std::string>>& cmdline_effects() {
  static const std::map<std::string, std::vector<std::string>> effects{
      {"mitigations", {fingerprint_key::kMitigations, fingerprint_key::kSmt}},
      {"nospectre_v1", {fingerprint_key::kMitigations}},
      {"nospectre_v2", {fingerprint_key::kMitigations}},
      {"spectre_v2", {fingerprint_key::kMitigations}},
      {"spectre_v2_user", {fingerprint_key::kMitigations}},
      {"spectre_bhi", {fingerprint_key::kMitigations}},
      {"spec_store_bypass_disable", {fingerprint_key::kMitigations}},
      {"nospec_store_bypass_disable", {fingerprint_key::kMitigations}},
      {"ssbd", {fingerprint_key::kMitigations}},
      {"spec_rstack_overflow", {fingerprint_key::kMitigations}},
      {"pti", {fingerprint_key::kMitigations}},
      {"nopti", {fingerprint_key::kMitigations}},
      {"kpti", {fingerprint_key::kMitigations}},
      {"mds", {fingerprint_key::kMitigations}},
      {"tsx_async_abort", {fingerprint_key::kMitigations}},
      {"l1tf", {fingerprint_key::kMitigations}},
      {"retbleed", {fingerprint_key::kMitigations}},
      {"srbds", {fingerprint_key::kMitigations}},
      {"mmio_stale_data", {fingerprint_key::kMitigations}},
      {"gather_data_sampling", {fingerprint_key::kMitigations}},
      {"reg_file_data_sampling", {fingerprint_key::kMitigations}},
      {"nosmt", {fingerprint_key::kSmt, fingerprint_key::kMitigations}},
      {"transparent_hugepage", {fingerprint_key::kThp}},
      {"clocksource", {fingerprint_key::kClocksource}},
      {"cpufreq.default_governor", {fingerprint_key::kGovernor}},
      {"intel_pstate", {fingerprint_key::kGovernor, fingerprint_key::kNoTurbo}},
      {"amd_pstate", {fingerprint_key::kGovernor, fingerprint_key::kBoost}},
      {"norandmaps", {fingerprint_key::kAslr}},
      {"dis_ucode_ldr", {fingerprint_key::kMicrocode}},
  };
  return effects;
}

std::string parameter_name(const std::string& word) { return word.substr(0, word.find('=')); }

std::vector<std::string> words_of(const std::string& cmdline) {
  std::istringstream in(cmdline);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Fingerprint keys either side sets on purpose.
std::set<std::string> declared_keys(const Declarations& a, const Declarations& b) {
  std::set<std::string> keys;
  for (const Declarations* declared : {&a, &b}) {
    if (declared->kernel) keys.insert(fingerprint_key::kKernelRelease);
    if (declared->device_tree) keys.insert(fingerprint_key::kDeviceTreeModel);
    for (const std::string& word : declared->cmdline) {
      keys.insert("cmdline:" + word);
      const auto effect = cmdline_effects().find(parameter_name(word));
      if (effect != cmdline_effects().end()) keys.insert(effect->second.begin(), effect->second.end());
    }
    for (const auto& [name, value] : declared->sysctl) {
      std::string dotted = name;
      std::replace(dotted.begin(), dotted.end(), '/', '.');
      if (dotted == "kernel.randomize_va_space") keys.insert(fingerprint_key::kAslr);
    }
  }
  return keys;
}

std::string shown(const json& value) {
  if (value.is_null()) return "unreadable";
  if (value.is_string()) return value.get<std::string>().empty() ? "(empty)" : value.get<std::string>();
  return value.dump();
}

// value -> sessions with it; `known` counts the sessions that had the key.
struct SideValues {
  std::map<std::string, int> count;
  int known = 0;
};

std::string describe(const SideValues& side) {
  if (side.count.size() == 1) return side.count.begin()->first;
  std::vector<std::string> parts;
  for (const auto& [value, sessions] : side.count)
    parts.push_back(fmt::format("{} in {} of {} sessions", value, sessions, side.known));
  return fmt::format("{}", fmt::join(parts, " / "));
}

std::string difference_line(const std::string& key, const ProfileSessions& base, const SideValues& base_values,
                            const ProfileSessions& test, const SideValues& test_values) {
  return fmt::format("{}: {} {}, {} {}", key, base.name, describe(base_values), test.name, describe(test_values));
}

// The value of `key` in each session, or of the path key/sub for an object
// such as mitigations. Sessions without the key are unknown.
SideValues values_of(const ProfileSessions& side, const std::string& key, const std::string& sub = "") {
  SideValues values;
  for (const json& fingerprint : side.fingerprints) {
    const FingerprintView view(fingerprint);
    const json* value = sub.empty() ? view.member(key) : view.member(key, sub);
    if (!value) continue;
    ++values.known;
    ++values.count[shown(*value)];
  }
  return values;
}

bool differ(const SideValues& a, const SideValues& b) {
  if (a.known == 0 || b.known == 0) return false;
  std::set<std::string> left, right;
  for (const auto& [value, n] : a.count) left.insert(value);
  for (const auto& [value, n] : b.count) right.insert(value);
  return left != right;
}

// Mitigations is an object of one line per vulnerability: one line per entry
// that differs, or a count when many do (mitigations=off changes a dozen).
void mitigation_lines(const ProfileSessions& base, const ProfileSessions& test, std::vector<std::string>& lines) {
  std::set<std::string> names;
  for (const ProfileSessions* side : {&base, &test})
    for (const json& fingerprint : side->fingerprints)
      if (const json* mitigations = FingerprintView(fingerprint).member(fingerprint_key::kMitigations);
          mitigations && mitigations->is_object())
        for (const auto& [name, value] : mitigations->items()) names.insert(name);
  std::vector<std::string> differing;
  std::vector<std::string> detail;
  for (const std::string& name : names) {
    const SideValues a = values_of(base, fingerprint_key::kMitigations, name);
    const SideValues b = values_of(test, fingerprint_key::kMitigations, name);
    if (!differ(a, b)) continue;
    differing.push_back(name);
    detail.push_back(difference_line(std::string(fingerprint_key::kMitigations) + "/" + name, base, a, test, b));
  }
  constexpr std::size_t kMostListed = 3;
  if (differing.size() <= kMostListed) {
    lines.insert(lines.end(), detail.begin(), detail.end());
  } else {
    lines.push_back(fmt::format("mitigations: {} entries differ ({}); kbench session show gives both fingerprints",
                                differing.size(), fmt::join(differing, ", ")));
  }
}

void cmdline_line(const ProfileSessions& base, const ProfileSessions& test, const std::set<std::string>& declared,
                  bool kernel_declared, std::vector<std::string>& lines) {
  auto words = [](const ProfileSessions& side, bool& known) {
    std::set<std::string> all;
    for (const json& fingerprint : side.fingerprints) {
      const FingerprintView view(fingerprint);
      if (!view.member(fingerprint_key::kCmdline)) continue;
      known = true;
      const auto cmdline = view.cmdline();
      if (!cmdline) continue;
      for (std::string& word : words_of(*cmdline)) all.insert(std::move(word));
    }
    return all;
  };
  bool base_known = false, test_known = false;
  const std::set<std::string> base_words = words(base, base_known);
  const std::set<std::string> test_words = words(test, test_known);
  if (!base_known || !test_known) return;
  auto only = [&](const std::set<std::string>& mine, const std::set<std::string>& theirs) {
    std::vector<std::string> result;
    for (const std::string& word : mine) {
      if (theirs.count(word) || declared.count("cmdline:" + word)) continue;
      // A kernel image of its own boots with its own image and initrd names.
      const std::string name = parameter_name(word);
      if (kernel_declared && (name == "BOOT_IMAGE" || name == "initrd")) continue;
      result.push_back(word);
    }
    return result;
  };
  const std::vector<std::string> base_only = only(base_words, test_words);
  const std::vector<std::string> test_only = only(test_words, base_words);
  if (base_only.empty() && test_only.empty()) return;
  std::vector<std::string> parts;
  if (!base_only.empty()) parts.push_back(fmt::format("only {} has {}", base.name, fmt::join(base_only, " ")));
  if (!test_only.empty()) parts.push_back(fmt::format("only {} has {}", test.name, fmt::join(test_only, " ")));
  lines.push_back(fmt::format("cmdline: {}", fmt::join(parts, "; ")));
}

struct Load {
  int counted = 0;  // sessions that start a run and recorded their load
  int busy = 0;
  double highest = 0;  // highest 1-minute load among the busy sessions
  int cpus = 0;        // of that session
};

bool starts_run(const FingerprintView& fingerprint) {
  const auto plan = fingerprint.plan();
  return !plan || !plan->session || *plan->session == 0;
}

Load load_of(const ProfileSessions& side) {
  Load load;
  for (const json& fingerprint : side.fingerprints) {
    const FingerprintView view(fingerprint);
    if (!starts_run(view)) continue;
    const auto one_minute = view.load_one_minute();
    const auto cpus = view.cpu_count();
    if (!one_minute || !cpus || *cpus < 1) continue;
    ++load.counted;
    if (*one_minute >= 0.5 * static_cast<double>(*cpus)) {
      ++load.busy;
      if (*one_minute >= load.highest) {
        load.highest = *one_minute;
        load.cpus = static_cast<int>(*cpus);
      }
    }
  }
  return load;
}

std::string describe(const Load& load) {
  if (load.counted == 0) return "unknown";
  if (load.busy == 0) return "quiet";
  return fmt::format("busy (1-minute load {:.2f} on {} CPUs at the start of {} of {} runs)", load.highest, load.cpus,
                     load.busy, load.counted);
}

}  // namespace

Declarations declarations_of(const std::vector<json>& fingerprints) {
  Declarations declared;
  std::set<std::string> words;
  for (const json& fingerprint : fingerprints) {
    const FingerprintView view(fingerprint);
    for (auto& [name, value] : view.sysctl()) declared.sysctl[name] = std::move(value);
    const auto profile = view.swprofile();
    if (!profile) continue;
    if (profile->kernel && !profile->kernel->empty()) declared.kernel = true;
    if (profile->dtb_sha256) declared.device_tree = true;
    words.insert(profile->cmdline.begin(), profile->cmdline.end());
  }
  declared.cmdline.assign(words.begin(), words.end());
  return declared;
}

std::vector<std::string> environment_differences(const ProfileSessions& base, const ProfileSessions& test) {
  const std::set<std::string> declared = declared_keys(base.declared, test.declared);
  std::vector<std::string> lines;
  cmdline_line(base, test, declared, declared.count("kernel_release") > 0, lines);
  for (const char* key : kKeys) {
    if (declared.count(key)) continue;
    if (std::string(key) == "mitigations") {
      mitigation_lines(base, test, lines);
      continue;
    }
    const SideValues a = values_of(base, key);
    const SideValues b = values_of(test, key);
    if (differ(a, b)) lines.push_back(difference_line(key, base, a, test, b));
  }
  const Load base_load = load_of(base);
  const Load test_load = load_of(test);
  if (base_load.busy > 0 || test_load.busy > 0)
    lines.push_back(fmt::format("load: {} {}, {} {}", base.name, describe(base_load), test.name, describe(test_load)));
  return lines;
}

void add_environment_differences(Report& report, store::ResultStore& store) {
  for (Table& table : report.tables) {
    std::vector<std::string> names{table.base_profile};
    names.insert(names.end(), table.test_profiles.begin(), table.test_profiles.end());
    std::map<std::string, ProfileSessions> sides;
    for (const std::string& name : names) sides[name].name = name;
    for (const store::SessionListing& listed : store.list_sessions(names)) {
      // A session without samples (killed at once) measured nothing here.
      if (!table.holds(listed.sut, listed.sut_class) || listed.samples == 0) continue;
      const auto session = store.session(listed.id);
      if (session) sides[listed.swprofile].fingerprints.push_back(session->fingerprint);
    }
    for (auto& [name, side] : sides) side.declared = declarations_of(side.fingerprints);
    for (const std::string& test : table.test_profiles) {
      if (test == table.base_profile) continue;
      for (std::string& line : environment_differences(sides[table.base_profile], sides[test]))
        table.environment_differences.push_back(std::move(line));
    }
  }
}

}  // namespace kbench::analysis
