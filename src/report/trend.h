#pragma once
// The renderers of `kbench trend` (analysis/trend.h): text, and html
// (report/trend_html.cpp).
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/trend.h"
#include "report/renderers.h"

namespace kbench::report {

// Per row: its swprofiles in trend order with mean, CI and sessions, a rule
// and the step's change where a change point falls; then one table per SUT
// of the step at each change point, seed style (Benchmark | Result Class |
// Step | Before | Change with (I)/(R)), with its legend. No title line: a
// terminal shows the command above it.
void render_trend_text(const analysis::TrendReport& trend, const std::string& title, std::ostream& out);

// One self-contained page (report/html_page.h): per row a Vega-Lite plot of
// the means with their CIs and the change points as labelled rules, the
// row's table, and the step table (ids and data sets: trend_html.cpp).
void render_trend_html(const analysis::TrendReport& trend, const std::string& title, std::ostream& out);

// "6.10..6.12 -> 6.13": where a step is, in words.
std::string step_place(const analysis::TrendStep& step);

// The lines under the trend that say how change points were found: order,
// method, penalty, noise.
std::vector<std::string> trend_method_lines(const analysis::TrendReport& trend);

// "change point: PELT found none" / the reason there was no detection, for one row.
std::string trend_row_summary(const analysis::TrendRow& row);

}  // namespace kbench::report
