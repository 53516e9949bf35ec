#include "app/compare.h"

#include <fnmatch.h>

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "analysis/compare.h"
#include "analysis/environment.h"
#include "analysis/kernel_profile.h"
#include "analysis/runs.h"
#include "app/option_values.h"
#include "app/session_report.h"
#include "app/store_access.h"
#include "common/errors.h"
#include "report/format_table.h"
#include "report/model.h"

namespace kbench::app {

namespace {

// --class naming no class of the store is a typo far more often than a
// wish for an empty report: one line listing the classes there are.
void require_class(store::ResultStore& store, const std::string& url, const std::string& class_glob) {
  if (class_glob == "*") return;
  std::set<std::string> classes;
  for (const auto& session : store.list_sessions({})) classes.insert(session.sut_class);
  for (const auto& name : classes) {
    if (fnmatch(class_glob.c_str(), name.c_str(), 0) == 0) return;
  }
  std::string known;
  for (const auto& name : classes) known += (known.empty() ? "" : ", ") + (name.empty() ? "'' (no class)" : name);
  throw InputError("--class " + class_glob + ": matches no SUT class in " + url + " (known: " +
                   (known.empty() ? std::string("none") : known) + ")");
}

// "SUT 'a'", "SUTs 'a', 'b'": for a message.
std::string sut_list(const std::set<std::string>& suts) {
  std::string text = suts.size() == 1 ? "SUT " : "SUTs ";
  for (auto it = suts.begin(); it != suts.end(); ++it) text += (it == suts.begin() ? "'" : ", '") + *it + "'";
  return text;
}

// Rows are per SUT: a test profile measured on none of the base's SUTs has
// nothing to be compared with, and a report of empty cells that exits 0 would
// hide that.
void require_shared_sut(const std::vector<store::SampleRow>& samples, const analysis::CompareOptions& compare,
                        const std::function<std::string()>& why_empty) {
  std::map<std::string, std::set<std::string>> suts_of;  // swprofile -> SUTs with samples
  const store::SampleRow* previous = nullptr;
  for (const store::SampleRow& sample : samples) {
    // The store delivers a session's samples together: one insert per run of them.
    if (previous && previous->sut == sample.sut && previous->swprofile == sample.swprofile) continue;
    suts_of[sample.swprofile].insert(sample.sut);
    previous = &sample;
  }
  const std::set<std::string>& base_suts = suts_of[compare.base];
  for (const std::string& test : compare.tests) {
    const std::set<std::string>& test_suts = suts_of[test];
    const bool shared = std::any_of(test_suts.begin(), test_suts.end(),
                                    [&](const std::string& sut) { return base_suts.count(sut) > 0; });
    if (shared) continue;
    if (test_suts.empty()) {
      throw InputError("compare: no rows for swprofile '" + test + "' match --sut/--benchmark/--resultclass" +
                       why_empty());
    }
    throw InputError(fmt::format(
        "compare: base '{}' was measured on {}, '{}' only on {}; rows are compared within one SUT, so measure both "
        "on the same one (kbench run --sut NAME)",
        compare.base, sut_list(base_suts), test, sut_list(test_suts)));
  }
}

// A test profile with no row on both sides has an empty column: exit 0
// would let --fail-on pass on a comparison that compared nothing.
void require_shared_row(const analysis::Report& report, const analysis::CompareOptions& compare) {
  for (std::size_t c = 0; c < compare.tests.size(); ++c) {
    const bool shared = std::any_of(report.tables.begin(), report.tables.end(), [&](const analysis::Table& table) {
      return std::any_of(table.rows.begin(), table.rows.end(), [&](const analysis::Row& row) {
        return row.base_present && c < row.cells.size() && row.cells[c].present;
      });
    });
    if (shared) continue;
    throw InputError(fmt::format(
        "compare: base '{}' and '{}' share no row (a benchmark with the same parameters and result class on one "
        "SUT) within --sut/--benchmark/--resultclass/--class; expected swprofiles measured with the same benchmarks",
        compare.base, compare.tests[c]));
  }
}

}  // namespace

void require_distinct_swprofiles(const std::string& base, const std::vector<std::string>& tests) {
  for (auto test = tests.begin(); test != tests.end(); ++test) {
    if (*test == base) {
      throw InputError("compare: '" + base + "' is the base and a test swprofile; expected another swprofile to "
                       "compare with (the same samples on both sides are not independent)");
    }
    if (std::find(tests.begin(), test, *test) != test) {
      throw InputError("compare: test swprofile '" + *test + "' is given twice; expected each swprofile once "
                       "(its tests would count twice in the false discovery rate)");
    }
  }
}

std::string shell_command(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                               "0123456789_@%+=:,./-") == std::string::npos;
    if (plain) {
      line += word;
      continue;
    }
    line += '\'';
    for (const char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

std::string equivalent_command(const CompareArguments& request) {
  std::vector<std::string> words{"kbench", "compare"};
  words.insert(words.end(), request.profiles.begin(), request.profiles.end());
  const CompareArguments defaults;
  const auto option = [&](const char* name, const std::string& value, const std::string& default_value) {
    if (value == default_value) return;
    words.emplace_back(name);
    words.push_back(value);
  };
  option("--format", request.format, defaults.format);
  option("--method", request.method, defaults.method);
  option("--fdr", request.fdr, defaults.fdr);
  option("--sign", request.sign, defaults.sign);
  option("--min-change", request.min_change, defaults.min_change);
  option("--sessions", request.sessions, defaults.sessions);
  option("--looks", request.looks, defaults.looks);
  option("--sut", request.filter.sut_glob, defaults.filter.sut_glob);
  option("--benchmark", request.filter.benchmark_glob, defaults.filter.benchmark_glob);
  option("--resultclass", request.filter.resultclass_glob, defaults.filter.resultclass_glob);
  option("--class", request.filter.class_glob, defaults.filter.class_glob);
  if (request.per_sut) words.emplace_back("--per-sut");
  for (const std::string& scenario : request.scenarios) {
    words.emplace_back("--scenario");
    words.push_back(scenario);
  }
  option("--fail-on", request.fail_on, defaults.fail_on);
  option("--store", request.store_url, defaults.store_url);
  return shell_command(words);
}

namespace {

ComparisonMarks count_marks(const analysis::Report& report) {
  ComparisonMarks marks;
  for (const analysis::Table& table : report.tables)
    for (const analysis::Row& row : table.rows)
      for (const analysis::Cell& cell : row.cells) {
        if (!cell.present) continue;
        marks.regressions += cell.verdict == analysis::Verdict::Regression;
        marks.improvements += cell.verdict == analysis::Verdict::Improvement;
      }
  return marks;
}

// The label may hold ':' (it ends at the first '='), the swprofile names may not.
Scenario parse_scenario(const std::string& text) {
  const auto equals = text.find('=');
  const auto colon = equals == std::string::npos ? std::string::npos : text.find(':', equals + 1);
  if (equals == std::string::npos || equals == 0 || colon == std::string::npos || colon == equals + 1 ||
      colon + 1 == text.size() || text.find(':', colon + 1) != std::string::npos) {
    throw InputError("--scenario " + shell_command({text}) +
                     ": expected LABEL=BASE:TEST, two swprofiles (e.g. gcc=gcc:gcc-spectre_v2)");
  }
  return {text.substr(0, equals), text.substr(equals + 1, colon - equals - 1), text.substr(colon + 1)};
}

std::vector<Scenario> checked_scenarios(const CompareArguments& options) {
  if (options.scenarios.empty()) {
    if (options.profiles.size() < 2) {
      throw InputError("compare: expected a base swprofile and at least one test swprofile");
    }
    return {};
  }
  if (!options.profiles.empty()) {
    throw InputError("compare: --scenario names the swprofiles itself; expected either BASE TEST... or --scenario, "
                     "not both");
  }
  const auto scenario_formats = report::format_names(report::View::Scenarios);
  if (std::find(scenario_formats.begin(), scenario_formats.end(), options.format) == scenario_formats.end()) {
    throw InputError("--scenario: only with --format " + report::format_choices(report::View::Scenarios) +
                     " (the per-scenario table), not --format " + options.format);
  }
  std::vector<Scenario> scenarios;
  for (const std::string& text : options.scenarios) {
    Scenario scenario = parse_scenario(text);
    for (const Scenario& earlier : scenarios) {
      if (earlier.label == scenario.label) {
        throw InputError("--scenario " + shell_command({text}) + ": the label '" + scenario.label +
                         "' is given twice; expected one row per label");
      }
    }
    scenarios.push_back(std::move(scenario));
  }
  return scenarios;
}

Gate parse_gate(const std::string& fail_on) {
  if (fail_on.empty()) return Gate::Never;
  if (fail_on == "regression") return Gate::Regression;
  if (fail_on == "change") return Gate::Change;
  throw InputError("--fail-on " + shell_command({fail_on}) + ": expected regression or change");
}

}  // namespace

int gate_status(Gate gate, const ComparisonMarks& marks) {
  switch (gate) {
    case Gate::Never:
      return kExitOk;
    case Gate::Regression:
      return marks.regressions > 0 ? kExitGate : kExitOk;
    case Gate::Change:
      return marks.regressions + marks.improvements > 0 ? kExitGate : kExitOk;
  }
  return kExitOk;
}

CompareRequest parse_compare_request(const CompareArguments& arguments) {
  CompareRequest request;
  const report::Format& format = report::find_format(arguments.format, report::View::Comparison);
  request.scenarios = checked_scenarios(arguments);
  request.fail_on = parse_gate(arguments.fail_on);  // a bad word is refused before anything is printed
  analysis::CompareOptions& compare = request.options;
  compare.method = analysis::parse_test_method(arguments.method);
  compare.fdr = parse_fdr(arguments.fdr);
  if (!arguments.sign.empty() && arguments.sign != "better" && arguments.sign != "raw") {
    throw InputError("--sign " + arguments.sign + ": expected better or raw");
  }
  if (arguments.sign == "better" && format.raw_change_only) {
    throw InputError("--sign better: --format " + arguments.format +
                     " prints the raw change, its arrow the direction of the value (the seed's layout); expected "
                     "--sign raw, or another format");
  }
  compare.sign = arguments.sign == "raw" ? analysis::SignConvention::Raw : analysis::SignConvention::Better;
  compare.min_change_pct = parse_min_change(arguments.min_change);
  compare.sessions = analysis::parse_session_mode(arguments.sessions);
  compare.looks = parse_integer("--looks", arguments.looks, 1, 20);
  compare.per_sut = arguments.per_sut;
  compare.keep_samples = format.needs_session_samples;
  request.format = &format;
  request.profiles = arguments.profiles;
  for (const Scenario& scenario : request.scenarios) require_distinct_swprofiles(scenario.base, {scenario.test});
  if (request.scenarios.empty()) {
    require_distinct_swprofiles(request.profiles.front(),
                                std::vector<std::string>(request.profiles.begin() + 1, request.profiles.end()));
  }
  request.filter = arguments.filter;
  request.store_url = arguments.store_url;
  request.command = arguments.command.empty() ? equivalent_command(arguments) : arguments.command;
  return request;
}

ComparisonMarks write_comparison(const CompareRequest& request, std::ostream& out, std::ostream& notes) {
  const report::Format& format = *request.format;
  const std::vector<Scenario>& scenarios = request.scenarios;
  analysis::CompareOptions compare = request.options;
  const auto renderer = format.comparison();

  // Every comparison to make: the profiles as given, or one per scenario.
  std::vector<std::vector<std::string>> comparisons;
  if (scenarios.empty()) comparisons.push_back(request.profiles);
  for (const Scenario& scenario : scenarios) comparisons.push_back({scenario.base, scenario.test});
  std::vector<std::string> profiles;  // each once, in the order given
  for (const auto& compared : comparisons)
    for (const std::string& profile : compared)
      if (std::find(profiles.begin(), profiles.end(), profile) == profiles.end()) profiles.push_back(profile);

  const OpenedStore opened = open_existing_store(request.store_url);
  require_swprofiles(opened, profiles, KnownProfiles::List);
  auto& store = opened.store;
  require_class(*store, opened.url, request.filter.class_glob);
  store::SampleQuery query = request.filter;
  // Every profile, not just the compared ones: the others are the SUT's
  // noise model (the prior of the session test).
  query.settled_only = true;
  const std::vector<store::SampleRow> samples = store->samples(query);
  const auto origins = analysis::session_origins(*store);
  // No rows is often because the only sessions are incomplete: say so on the same line.
  const auto why_empty = [&] {
    std::ostringstream incomplete;
    print_incomplete_sessions(*store, profiles, incomplete);
    std::string why = incomplete.str();
    return why.empty() ? why : "; " + why.substr(0, why.find('\n'));
  };
  std::vector<analysis::Report> reports;
  for (const auto& compared : comparisons) {
    compare.base = compared.front();
    compare.tests.assign(compared.begin() + 1, compared.end());
    // Sides from different runs carry the run-to-run noise: which run and
    // kernel each session was is in its fingerprint.
    analysis::Report result = analysis::build_comparison(samples, compare, origins);
    if (result.tables.empty()) {
      throw InputError("compare: no rows for swprofile '" + compare.base +
                       "' match --sut/--benchmark/--resultclass" + why_empty());
    }
    require_shared_sut(samples, compare, why_empty);
    require_shared_row(result, compare);
    analysis::add_environment_differences(result, *store);
    // The scenario table has no room for it.
    if (format.shows_kernel_time && scenarios.empty()) analysis::add_kernel_time_shifts(result, *store);
    result.command = request.command;
    reports.push_back(std::move(result));
  }

  // A benchmark that failed has no row, or fewer samples: say so.
  std::ostringstream failures;
  for (const auto& failed : store->list_outcomes(profiles, store::OutcomeStatus::Failed)) {
    failures << "failed: " << failed.benchmark << " (" << failed.swprofile << ", session " << failed.session_number
             << "): " << failed.outcome.reason << "\n";
  }
  print_incomplete_sessions(*store, profiles, failures);
  ComparisonMarks marks;
  for (const analysis::Report& result : reports) {
    const ComparisonMarks counted = count_marks(result);
    marks.regressions += counted.regressions;
    marks.improvements += counted.improvements;
  }
  if (!scenarios.empty()) {
    std::vector<report::Scenario> rendered;
    for (std::size_t i = 0; i < scenarios.size(); ++i) rendered.push_back({scenarios[i].label, std::move(reports[i])});
    format.scenarios(rendered, out);
    notes << failures.str();
    return marks;
  }
  analysis::Report& result = reports.front();
  // A format whose document gets archived or mailed (the html page) carries
  // them too; the others leave them to `notes`.
  std::istringstream lines(failures.str());
  for (std::string line; std::getline(lines, line);) result.notes.push_back(line);
  renderer->render(result, out);
  notes << failures.str();
  return marks;
}

}  // namespace kbench::app
