#pragma once
// Options that several commands share, so that each is parsed and worded the
// same way wherever it appears. The values are checked by app's parsers,
// which the dashboard's query parameters go through too.
#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/option_values.h"
#include "app/store_access.h"
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

using app::check_name;
using app::parse_decimal;
using app::parse_fdr;
using app::parse_glob;
using app::parse_integer;
using app::parse_min_change;
using app::parse_spread;
using app::parse_timeout;

using app::has_run_to_resume;
using app::KnownProfiles;
using app::open_existing_store;
using app::OpenedStore;
using app::require_swprofiles;

// Options whose value is checked as CLI11 parses it, so a bad value is one
// InputError line (exit 2) before anything runs.
void add_glob_option(CLI::App& command, const std::string& name, std::string& into, const std::string& description);
void add_integer_option(CLI::App& command, const std::string& name, std::optional<int>& into, int min, int max,
                        const std::string& description);
void add_timeout_option(CLI::App& command, const std::string& name, std::string& into,
                        const std::string& description);
// One of `choices`; anything else is InputError "<name> 'x': expected a, b or c".
// `aliases` are accepted too and stored as the choice they name.
void add_choice_option(CLI::App& command, const std::string& name, std::string& into,
                       const std::vector<std::string>& choices, const std::string& description,
                       const std::map<std::string, std::string>& aliases = {});
// A name (check_name): given empty, it is refused, not taken for "not given".
void add_name_option(CLI::App& command, const std::string& name, std::string& into, const std::string& description);

// --sut, --benchmark, --resultclass: checked globs written straight into the
// query; the caller sets the swprofiles.
void add_sample_filter_options(CLI::App& command, store::SampleQuery& filter);

}  // namespace kbench::cli
