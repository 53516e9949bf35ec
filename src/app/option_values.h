#pragma once
// Option values given as text, by the command line or by a dashboard query
// parameter: each parser is the one check of its option, so a bad value is
// refused with the same words wherever it comes from.
#include <chrono>
#include <optional>
#include <string>

#include "plan/plan.h"

namespace kbench::app {

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

// A duration such as 90s, 10m or 1h30m, in whole seconds from
// plan::kMinTimeout to plan::kMaxTimeout: a benchmark's timeout is kept in
// seconds, so 1ms would be 0s.
std::chrono::seconds parse_timeout(const std::string& option, const std::string& text);
// --spread: 0, or a pause between sessions such as 90s, 10m or 1h30m.
std::chrono::milliseconds parse_spread(const std::string& text);

// A non-empty shell glob that fnmatch (kbench run, against the catalogue) and
// SQLite's GLOB (the store) read the same way: every '[' closed by a ']', no
// backslash escapes (SQLite has none) and no [:class:]. Returns it with "[!"
// written "[^", which both read as a negated set (SQLite knows only '^').
std::string parse_glob(const std::string& option, const std::string& text);

// A swprofile or SUT name, held to the rule of a plan's names
// (plan::name_expectation).
void check_name(const std::string& option, const std::string& text);

}  // namespace kbench::app
