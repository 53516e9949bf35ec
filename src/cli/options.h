#pragma once
// Options and checks that several commands share, so that each is parsed and
// worded the same way wherever it appears.
#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "store/result_store.h"

namespace kbench::cli {

// Accepted ranges of the numeric options, said in their --help and errors.
// The limits live with the plan format, so a plan and the command line accept
// the same values.
using plan::kMaxRepeats;
using plan::kMaxWarmups;
using plan::kMaxSessions;
using plan::kMinTimeout;
using plan::kMaxTimeout;

// Each parser below throws InputError "<option> '<text>': expected ..." and
// returns the value otherwise.

// --fdr: a level in (0, 1) or "off" (no correction).
std::optional<double> parse_fdr(const std::string& text);

// A decimal integer in [min, max]: digits with an optional leading '-' (no
// hex, exponent, '+' or blanks, which CLI11 would take or word differently).
int parse_integer(const std::string& option, const std::string& text, int min, int max);

// A finite decimal number >= min (no hex, inf or nan).
double parse_decimal(const std::string& option, const std::string& text, double min);

// --min-change of compare and trend: 0, or a percentage from
// kMinMinChangePct (the smallest that prints as non-zero) to kMaxMinChangePct.
inline constexpr double kMinMinChangePct = 0.01;
inline constexpr double kMaxMinChangePct = 1000;
double parse_min_change(const std::string& text);

// A duration such as 90s, 10m or 1h30m, in whole seconds from kMinTimeout to
// kMaxTimeout: a benchmark's timeout is kept in seconds, so 1ms would be 0s.
std::chrono::seconds parse_timeout(const std::string& option, const std::string& text);
// --spread: 0, or a pause between sessions such as 90s, 10m or 1h30m.
std::chrono::milliseconds parse_spread(const std::string& text);

// A non-empty shell glob that fnmatch (kbench run, against the catalogue) and
// SQLite's GLOB (the store) read the same way: every '[' closed by a ']', no
// backslash escapes (SQLite has none) and no [:class:]. Returns it with "[!"
// written "[^", which both read as a negated set (SQLite knows only '^').
std::string parse_glob(const std::string& option, const std::string& text);

// A swprofile or SUT name given on the command line, held to the rule of a
// plan's names (plan::name_expectation).
void check_name(const std::string& option, const std::string& text);

// Options whose value is checked as CLI11 parses it, so a bad value is one
// InputError line (exit 2) before anything runs.
void add_glob_option(CLI::App& command, const std::string& name, std::string& into, const std::string& description);
void add_integer_option(CLI::App& command, const std::string& name, std::optional<int>& into, int min, int max,
                        const std::string& description);
void add_timeout_option(CLI::App& command, const std::string& name, std::string& into,
                        const std::string& description);
// A name (check_name): given empty, it is refused, not taken for "not given".
void add_name_option(CLI::App& command, const std::string& name, std::string& into, const std::string& description);

// --sut, --benchmark, --resultclass: checked globs written straight into the
// query; the caller sets the swprofiles.
void add_sample_filter_options(CLI::App& command, store::SampleQuery& filter);

// The store named by --store (or the default), which must already exist;
// opened read-only (the reading commands never write, and work on a
// read-only or full file system).
struct OpenedStore {
  std::string url;
  std::unique_ptr<store::ResultStore> store;
};
OpenedStore open_existing_store(const std::string& store_url_option);

// --resume: whether the store holds a run, of any of `swprofiles` (all when
// empty), of the plan with this key (ExecOptions::plan_key). A missing SQLite
// file holds none, and is not created.
bool has_run_to_resume(const std::string& store_url, const std::string& plan_key,
                       const std::vector<std::string>& swprofiles);

// Throws InputError naming the first profile the store does not hold; with
// KnownProfiles::List the message also lists the profiles it does hold.
enum class KnownProfiles { Omit, List };
void require_swprofiles(const OpenedStore& opened, const std::vector<std::string>& profiles,
                        KnownProfiles known = KnownProfiles::Omit);

}  // namespace kbench::cli
