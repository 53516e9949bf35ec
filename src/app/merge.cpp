#include "app/merge.h"

#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

#include "common/errors.h"
#include "common/params.h"
#include "report/format.h"
#include "store/result_store.h"

namespace kbench::app {

namespace {

bool matches_any(const std::vector<std::string>& globs, const std::string& text) {
  if (globs.empty()) return true;
  return std::any_of(globs.begin(), globs.end(),
                     [&](const std::string& glob) { return fnmatch(glob.c_str(), text.c_str(), 0) == 0; });
}

std::string joined(const std::vector<std::string>& globs) {
  std::string text;
  for (const auto& glob : globs) text += (text.empty() ? "" : ",") + glob;
  return text;
}

// "SUT lab-1, swprofile base, session 2, uid 0123...": how a message names a session.
std::string describe(const store::SessionContent& content) {
  return fmt::format("SUT {}, swprofile {}, session {}, uid {}", content.sut.name, content.swprofile,
                     content.session_index + 1, content.uid);
}

std::string benchmark_text(const store::BenchmarkKey& key) {
  const std::string params = params_text(key.params);
  return params.empty() ? key.name : key.name + " " + params;
}

// Both stores deliver their rows ordered by text, but a database's collation
// may order differently; equality must not depend on it.
// Usually already in order: checking is linear, sorting is not.
void sort_content(store::SessionContent& content) {
  const auto outcome_less = [](const auto& a, const auto& b) {
    return std::tie(a.benchmark.name, a.benchmark.params) < std::tie(b.benchmark.name, b.benchmark.params);
  };
  const auto result_less = [](const auto& a, const auto& b) {
    return std::tie(a.benchmark.name, a.benchmark.params, a.result_class.name, a.result_class.unit, a.repeat) <
           std::tie(b.benchmark.name, b.benchmark.params, b.result_class.name, b.result_class.unit, b.repeat);
  };
  if (!std::is_sorted(content.outcomes.begin(), content.outcomes.end(), outcome_less)) {
    std::sort(content.outcomes.begin(), content.outcomes.end(), outcome_less);
  }
  if (!std::is_sorted(content.results.begin(), content.results.end(), result_less)) {
    std::sort(content.results.begin(), content.results.end(), result_less);
  }
}

bool same_sut(const store::Sut& a, const store::Sut& b) {
  return std::tie(a.name, a.hostname, a.arch, a.cpu_model, a.cpu_count, a.memory_gib, a.product_name) ==
         std::tie(b.name, b.hostname, b.arch, b.cpu_model, b.cpu_count, b.memory_gib, b.product_name);
}

// What differs between two sessions with one uid ("" when nothing does).
// The session number is not content: DST may have renumbered it.
std::string difference(store::SessionContent source, store::SessionContent destination) {
  if (!same_sut(source.sut, destination.sut)) return "the SUT differs";
  if (source.swprofile != destination.swprofile) {
    return "the swprofile differs (" + source.swprofile + " vs " + destination.swprofile + ")";
  }
  if (source.started_at != destination.started_at) {
    return "the start time differs (" + source.started_at + " vs " + destination.started_at + ")";
  }
  if (source.fingerprint != destination.fingerprint) return "the fingerprint differs";
  if (source.finished_at != destination.finished_at) {
    return "finished differs (" + source.finished_at.value_or("unfinished") + " vs " +
           destination.finished_at.value_or("unfinished") + ")";
  }
  const auto planned_names = [](const std::optional<std::vector<store::BenchmarkKey>>& planned) {
    std::vector<std::string> names;
    if (planned) {
      for (const auto& key : *planned) names.push_back(benchmark_text(key));
    }
    return names;
  };
  if (source.planned.has_value() != destination.planned.has_value() ||
      planned_names(source.planned) != planned_names(destination.planned)) {
    return "the planned benchmarks differ";
  }
  sort_content(source);
  sort_content(destination);
  const auto outcome_key = [](const store::StoredOutcome& o) {
    return std::make_tuple(o.benchmark.name, o.benchmark.params, std::string(store::to_string(o.outcome.status)),
                           o.outcome.reason, o.outcome.stderr_tail, o.recorded_at);
  };
  if (source.outcomes.size() != destination.outcomes.size()) {
    return fmt::format("the outcomes differ ({} vs {} benchmarks)", source.outcomes.size(),
                       destination.outcomes.size());
  }
  for (std::size_t i = 0; i < source.outcomes.size(); ++i) {
    if (outcome_key(source.outcomes[i]) != outcome_key(destination.outcomes[i])) {
      return "the outcome of " + benchmark_text(source.outcomes[i].benchmark) + " differs (" +
             std::string(store::to_string(source.outcomes[i].outcome.status)) + " vs " +
             std::string(store::to_string(destination.outcomes[i].outcome.status)) + ")";
    }
  }
  if (source.results.size() != destination.results.size()) {
    return fmt::format("the results differ ({} vs {} samples)", source.results.size(), destination.results.size());
  }
  for (std::size_t i = 0; i < source.results.size(); ++i) {
    const auto& a = source.results[i];
    const auto& b = destination.results[i];
    if (std::tie(a.benchmark.name, a.benchmark.params, a.result_class, a.repeat, a.value, a.recorded_at) !=
        std::tie(b.benchmark.name, b.benchmark.params, b.result_class, b.repeat, b.value, b.recorded_at)) {
      return fmt::format("the results differ at {} {} repeat {} ({} vs {})", benchmark_text(a.benchmark),
                         a.result_class.label(), a.repeat, report::format_exact(a.value),
                         report::format_exact(b.value));
    }
  }
  return "";
}

// A result class whose direction ("better") the two stores disagree on: the
// destination would refuse it part-way, so it is found before anything is written.
std::optional<std::string> direction_conflict(store::ResultStore& source, store::ResultStore& destination,
                                              const std::set<std::string>& benchmarks) {
  std::map<std::tuple<std::string, std::string, std::string>, Better> known;
  for (const auto& listing : destination.list_benchmarks("*")) {
    if (!benchmarks.count(listing.name)) continue;
    for (const auto& rc : listing.result_classes) known[{listing.name, rc.name, rc.unit}] = rc.better;
  }
  for (const auto& listing : source.list_benchmarks("*")) {
    if (!benchmarks.count(listing.name)) continue;
    for (const auto& rc : listing.result_classes) {
      const auto found = known.find({listing.name, rc.name, rc.unit});
      if (found != known.end() && found->second != rc.better) {
        return fmt::format("{} {}: {} is better in {}, {} is better in {}", listing.name, rc.label(),
                           to_string(rc.better), source.location(), to_string(found->second),
                           destination.location());
      }
    }
  }
  return std::nullopt;
}

// Whether two URLs name one SQLite file (then merging upgrades it in place).
bool same_store(const std::string& a, const std::string& b) {
  const store::StoreUrl first = store::parse_store_url(a), second = store::parse_store_url(b);
  if (first.scheme != "sqlite" || second.scheme != "sqlite") return a == b;
  std::error_code error;
  return std::filesystem::equivalent(first.path, second.path, error);
}

}  // namespace

MergeSummary merge_stores(const MergeRequest& options) {
  const auto started = std::chrono::steady_clock::now();
  auto source = store::open_store(options.source, store::OpenMode::ReadOnly);
  // Bad input is refused before DST is opened, which would create it.
  const auto select = [&] {
    std::vector<store::SessionListing> selected;
    for (auto& listing : source->list_sessions({})) {
      if (matches_any(options.sut_globs, listing.sut) && matches_any(options.swprofile_globs, listing.swprofile)) {
        selected.push_back(std::move(listing));
      }
    }
    return selected;
  };
  std::vector<store::SessionListing> selected = select();
  const bool filtered = !options.sut_globs.empty() || !options.swprofile_globs.empty();
  if (selected.empty() && filtered) {
    throw InputError(fmt::format("merge: no session of {} matches{}{}", options.source,
                                 options.sut_globs.empty() ? "" : " --sut " + joined(options.sut_globs),
                                 options.swprofile_globs.empty() ? "" : " --swprofile " + joined(options.swprofile_globs)));
  }
  const bool without_uids = std::any_of(selected.begin(), selected.end(), [](const auto& l) { return l.uid.empty(); });
  if (without_uids && !same_store(options.source, options.destination)) {
    throw InputError("merge: " + options.source +
                     " is a store of an older schema version whose sessions have no uid to merge by; upgrade it "
                     "first with kbench merge " + options.source + " " + options.source + " (which adds nothing); "
                     "nothing was written");
  }

  // A dry run writes nothing, so it does not create a missing destination either.
  std::unique_ptr<store::ResultStore> destination;
  if (!options.dry_run) {
    destination = store::open_store(options.destination, store::OpenMode::CreateIfMissing);
  } else if (store::store_present(options.destination)) {
    destination = store::open_store(options.destination, store::OpenMode::ReadOnly);
  }
  if (without_uids) {
    // DST is SRC, which opening DST has just upgraded: a connection opened
    // before reads it as the old version.
    source = store::open_store(options.source, store::OpenMode::ReadOnly);
    selected = select();
  }

  // First every check, then every write: a conflict leaves DST as it was.
  std::vector<const store::SessionListing*> to_copy;
  std::set<std::string> benchmarks_to_copy;
  int present = 0;
  std::vector<std::pair<std::string, std::string>> conflicts;  // session, what differs
  for (const auto& listing : selected) {
    if (listing.uid.empty()) {
      throw InputError("merge: " + options.source + " has sessions without uid (--dry-run does not upgrade it)");
    }
    const auto existing = destination ? destination->find_session_by_uid(listing.uid) : std::nullopt;
    if (!existing) {
      to_copy.push_back(&listing);
      for (const auto& benchmark : source->session_benchmarks(listing.id)) benchmarks_to_copy.insert(benchmark.benchmark);
      continue;
    }
    auto content = source->read_session(listing.id);
    const std::string name = describe(content);
    const std::string differs = difference(std::move(content), destination->read_session(*existing));
    if (differs.empty()) {
      ++present;
    } else {
      conflicts.emplace_back(name, differs);
    }
  }
  if (!conflicts.empty()) {
    throw InputError(fmt::format("merge: conflict: {} is in {} and {} with different content: {}{}; nothing was "
                                 "written",
                                 conflicts.front().first, options.source, options.destination,
                                 conflicts.front().second,
                                 conflicts.size() > 1 ? fmt::format(" (and {} more conflicting sessions)",
                                                                    conflicts.size() - 1)
                                                      : ""));
  }
  if (destination) {
    if (const auto conflict = direction_conflict(*source, *destination, benchmarks_to_copy)) {
      throw InputError("merge: result class " + *conflict + "; nothing was written");
    }
  }

  MergeSummary summary;
  summary.copied = to_copy.size();
  summary.present = present;
  for (const auto* listing : to_copy) {
    if (!listing->finished) ++summary.unfinished;
    if (options.dry_run) {
      summary.samples += listing->samples;
      continue;
    }
    const auto content = source->read_session(listing->id);
    const std::int64_t id = destination->import_session(content);
    summary.samples += static_cast<std::int64_t>(content.results.size());
    const auto stored = destination->session(id);
    if (stored && stored->session_index != content.session_index) {
      summary.renumbered.push_back(fmt::format("  {} {} session {} is session {} in {} (uid {})", content.sut.name,
                                               content.swprofile, content.session_index + 1,
                                               stored->session_index + 1, options.destination, content.uid));
    }
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

}  // namespace kbench::app
