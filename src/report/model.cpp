#include "report/model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <fmt/format.h>

#include "report/format.h"
#include "report/renderers.h"

namespace kbench::report {

using analysis::Cell;
using analysis::ColumnSummary;
using analysis::kSessionsToDecideLimit;
using analysis::Legend;
using analysis::Report;
using analysis::Row;
using analysis::SignConvention;
using analysis::signed_change;
using analysis::SutScope;
using analysis::Table;
using analysis::Verdict;

std::string escape_pipes(const std::string& text) {
  std::string result;
  for (char c : text) {
    if (c == '|') result += '\\';
    result += c;
  }
  return result;
}

void PerTableRenderer::render(const Report& report, std::ostream& out) const {
  bool first = true;
  for (const Table& table : report.tables) {
    if (!first) out << '\n';
    first = false;
    render_table(table, report.legend, out);
  }
}

std::string change_cell(const Row& row, const Cell& cell, SignConvention sign, Footnotes& notes) {
  const double change = signed_change(row, cell, sign);
  // No change to show (e.g. a zero base): the reason, if any, still shows.
  if (std::isnan(change)) {
    const std::string markers = notes.markers(cell);
    return markers.substr(markers.empty() ? 0 : 1);
  }
  return std::string(mark_prefix(cell.verdict)) + format_percent(change) + notes.markers(cell);
}

void write_raw_change_notes(const Table& table, const Legend& legend, const Footnotes& notes,
                            const std::vector<std::string>& layout_lines, std::ostream& out) {
  for (const std::string& line : legend_lines(legend, true, &table)) out << line << '\n';
  for (const std::string& line : layout_lines) out << line << '\n';
  for (const std::string& line : geomean_lines(table, SignConvention::Raw)) out << line << '\n';
  for (const std::string& line : notes.lines()) out << line << '\n';
  for (const std::string& line : environment_lines(table)) out << line << '\n';
  write_kernel_time_list(table, out);
  out << '\n';
  for (const std::string& line : summary_lines(table, legend)) out << line << '\n';
}

std::string sut_heading(const std::string& sut, SutScope scope) {
  return (scope == SutScope::SutClass ? "Results for SUT Class " : "Results for SUT ") + sut;
}

std::string table_heading(const Table& table) { return sut_heading(table.sut, table.sut_scope) + ":"; }

std::string Footnotes::marker(const std::string& text) {
  auto [it, inserted] = numbers_.emplace(text, static_cast<int>(texts_.size()) + 1);
  if (inserted) texts_.push_back(text);
  return fmt::format("[{}]", it->second);
}

std::string Footnotes::markers(const Cell& cell) {
  if (!cell.present) return "";
  std::string result;
  if (!cell.note.empty()) result += marker(cell.note);
  if (cell.session_noisy) result += marker(kSessionNoisyNote);
  if (cell.heavy_tail) result += marker(kHeavyTailNote);
  if (cell.bimodal) result += marker(kBimodalNote);
  return result.empty() ? result : " " + result;
}

std::vector<std::string> Footnotes::lines() const {
  std::vector<std::string> result;
  for (std::size_t i = 0; i < texts_.size(); ++i) result.push_back(fmt::format("[{}] {}", i + 1, texts_[i]));
  return result;
}

namespace {

struct SessionCounts {
  int cells = 0;                                 // cells tested on session means
  std::map<std::pair<std::size_t, std::size_t>, int> by_count;  // (base, test) sessions -> cells
  std::size_t fewest = 0;                        // sessions on the thinner side of any cell
  std::size_t most = 0;
  int with_prior = 0;                            // cells that borrowed the SUT's noise model
  double prior_df_low = stats::kNaN;
  double prior_df_high = stats::kNaN;
  int with_runs = 0;                             // cells whose sides came from different runs
  double run_df_low = stats::kNaN;
  double run_df_high = stats::kNaN;
};

// Degrees of freedom come out of estimates (a prior's df can be 1e-7, a run
// df 3.4999): one decimal says all a reader can use.
std::string df_text(double df) {
  std::string text = fmt::format("{:.1f}", df);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
  return text;
}

std::string df_range(double low, double high) {
  const std::string from = df_text(low), to = df_text(high);
  return from == to ? from : from + " to " + to;
}

SessionCounts session_counts(const Table& table) {
  SessionCounts counts;
  for (const Row& row : table.rows) {
    if (!row.base_present) continue;
    for (const Cell& cell : row.cells) {
      // Cells tested on pairs say so on a line of their own.
      if (!cell.present || cell.base_sessions == 0 || cell.test_sessions == 0 || cell.pairs > 0) continue;
      ++counts.cells;
      ++counts.by_count[{cell.base_sessions, cell.test_sessions}];
      const std::size_t low = std::min(cell.base_sessions, cell.test_sessions);
      const std::size_t high = std::max(cell.base_sessions, cell.test_sessions);
      counts.fewest = counts.cells == 1 ? low : std::min(counts.fewest, low);
      counts.most = std::max(counts.most, high);
      if (cell.prior_df > 0) {
        ++counts.with_prior;
        counts.prior_df_low = std::isnan(counts.prior_df_low) ? cell.prior_df : std::min(counts.prior_df_low, cell.prior_df);
        counts.prior_df_high = std::isnan(counts.prior_df_high) ? cell.prior_df : std::max(counts.prior_df_high, cell.prior_df);
      }
      if (cell.run_df > 0) {
        ++counts.with_runs;
        counts.run_df_low = std::isnan(counts.run_df_low) ? cell.run_df : std::min(counts.run_df_low, cell.run_df);
        counts.run_df_high = std::isnan(counts.run_df_high) ? cell.run_df : std::max(counts.run_df_high, cell.run_df);
      }
    }
  }
  return counts;
}

// The session-level test's basis in one line: how many sessions a side, and
// where the SUT's noise model (learnt from other profiles) stood in for them.
std::string session_basis_line(const SessionCounts& counts) {
  auto common = counts.by_count.begin();
  for (auto it = counts.by_count.begin(); it != counts.by_count.end(); ++it)
    if (it->second > common->second) common = it;
  std::string line = fmt::format("Sessions: tested on session means, {}+{} sessions (base+test)", common->first.first,
                                 common->first.second);
  if (common->second < counts.cells)
    line += fmt::format(" on {} of {} cells, {} to {} a side on the others", common->second, counts.cells,
                        counts.fewest, counts.most);
  if (counts.with_prior > 0) {
    line += fmt::format("; {} also used this SUT's noise model from other profiles (prior df {})",
                        count_noun(counts.with_prior, "cell", "cells"),
                        df_range(counts.prior_df_low, counts.prior_df_high));
  }
  if (counts.with_runs > 0) {
    line += fmt::format("; the sides come from different runs: {} {} the run-to-run noise of kernels "
                        "measured in several runs on this SUT (run df {})",
                        count_noun(counts.with_runs, "cell", "cells"), counts.with_runs == 1 ? "carries" : "carry", df_range(counts.run_df_low, counts.run_df_high));
  }
  return line + ".";
}

// Cells tested on pairs of sessions measured at the same moment (a paired
// design): how many pairs, and the model, so that a reader knows the change
// is not the run model's; "" when there are none.
std::string pairs_line(const Table& table, analysis::TestMethod method) {
  int cells = 0;
  std::size_t fewest = 0, most = 0;
  for (const Row& row : table.rows)
    for (const Cell& cell : row.cells) {
      if (!row.base_present || !cell.present || cell.pairs == 0 || !cell.note.empty()) continue;
      fewest = cells++ == 0 ? cell.pairs : std::min(fewest, cell.pairs);
      most = std::max(most, cell.pairs);
    }
  if (cells == 0) return {};
  std::string line = fmt::format(
      "Paired: {} tested on {} pairs measured at the same moment (one log ratio per pair, a t-test with the units' "
      "own speed difference as a term where they swap: df = pairs - 2, else pairs - 1)",
      count_noun(cells, "cell", "cells"), fewest == most ? std::to_string(most) : fmt::format("{} to {}", fewest, most));
  if (method != analysis::TestMethod::Welch)
    line += fmt::format("; --method {} does not apply to pairs: they are tested with this t-test{}",
                        analysis::method_name(method),
                        analysis::gives_p_values(method) ? "" : ", marked where its 95% CI excludes 0");
  return line + ".";
}

}  // namespace

std::vector<std::string> legend_lines(const Legend& legend, bool change_is_raw, const Table* table) {
  std::vector<std::string> lines;
  // With --sessions sessions, "welch" is the t-test on log session means
  // (docs/statistics.md); its title says so rather than naming Welch.
  std::string method = "Method: " + (legend.sessions != "pooled" && legend.method == analysis::TestMethod::Welch
                                         ? std::string("t-test on session means (log scale, SUT noise model)")
                                         : std::string(analysis::method_title(legend.method)));
  if (!analysis::gives_p_values(legend.method)) {
    method += fmt::format(", {} rows compared", legend.rows_tested);
  } else if (legend.fdr) {
    method += fmt::format(", Benjamini-Hochberg FDR q={} over {} rows tested", format_exact(*legend.fdr),
                          legend.rows_tested);
  } else {
    method += fmt::format(", FDR off, alpha={} per row, {} rows tested", format_exact(legend.alpha),
                          legend.rows_tested);
  }
  lines.push_back(method + ".");
  const SessionCounts counts = table ? session_counts(*table) : SessionCounts{};
  if (legend.sessions == "pooled") {
    lines.push_back("Sessions: every repeat tested as an independent sample (--sessions pooled).");
  } else if (counts.cells > 0) {
    lines.push_back(session_basis_line(counts));
  } else if (legend.cells_on_session_means > 0) {
    lines.push_back(fmt::format("Sessions: {} tested on session means (--sessions {}).",
                                count_noun(legend.cells_on_session_means, "cell", "cells"), legend.sessions));
  }
  if (table) {
    int across = 0;
    std::size_t fewest = 0, most = 0;
    for (const Row& row : table->rows)
      for (const Cell& cell : row.cells) {
        // A class row the method cannot test across machines (mwu,
        // ci-overlap) still prints the machines' change, with a note: it
        // was not tested, so it is not counted.
        if (!cell.present || cell.machines == 0 || !cell.note.empty()) continue;
        fewest = across++ == 0 ? cell.machines : std::min(fewest, cell.machines);
        most = std::max(most, cell.machines);
      }
    if (across > 0) {
      lines.push_back(fmt::format("Machines: {} tested across the class's machines ({} machines): one change per "
                                  "machine, its geometric mean printed, a t-test against 0 with df = machines - 1.",
                                  count_noun(across, "cell", "cells"),
                                  fewest == most ? std::to_string(most) : fmt::format("{} to {}", fewest, most)));
    }
  }
  if (table) {
    if (const std::string line = pairs_line(*table, legend.method); !line.empty()) lines.push_back(line);
  }
  if (legend.looks > 1) {
    const double level = legend.fdr ? *legend.fdr : legend.alpha;
    lines.push_back(fmt::format("Until decided: {} looks at the data, each at {}={:.3g} ({} / {}, Bonferroni).",
                                legend.looks, legend.fdr ? "q" : "alpha", level / legend.looks,
                                format_exact(level), legend.looks));
  }
  if (change_is_raw || legend.sign == SignConvention::Raw)
    lines.push_back("Change: (test - base) / base; raw: positive = larger value.");
  else
    lines.push_back("Change: (test - base) / base; positive = better (sign flipped where lower is better).");
  lines.push_back("(I) significant improvement, (R) significant regression, (?) undecided: more sessions needed.");
  // The printed interval (csv, json) and the equivalence rule use a per-row
  // level, the marks the FDR level: without this an unmarked row whose CI
  // excludes 0 looks like a contradiction.
  const std::string ci = fmt::format("CIs are {}, per row, not adjusted for {}.", format_level(legend.ci_level),
                                     legend.fdr ? "the FDR of the marks" : "the number of rows tested");
  // A tested cell left at None without a reason was never classified (a
  // method without the equivalence verdict): then a blank means "not
  // significant", not "unchanged".
  bool unclassified = false;
  if (table)
    for (const Row& row : table->rows)
      for (const Cell& cell : row.cells)
        unclassified = unclassified || (row.base_present && cell.present && cell.verdict == Verdict::None &&
                                        cell.note.empty() && std::isfinite(cell.change_pct));
  // Nothing tested (every cell's note says why): a blank is not "unchanged".
  bool any_tested = false;
  bool any_untested = false;
  if (table)
    for (const Row& row : table->rows)
      for (const Cell& cell : row.cells) {
        if (!row.base_present || !cell.present) continue;
        (cell.note.empty() ? any_tested : any_untested) = true;
      }
  if (any_untested && !any_tested) {
    lines.push_back("No mark: not tested; each cell's note says why.");
    return lines;
  }
  if (legend.min_change_pct > 0 && !unclassified)
    lines.push_back(fmt::format("No mark: unchanged, the CI of the change lies within +/-{}. {}",
                                format_percent(legend.min_change_pct), ci));
  else if (legend.min_change_pct > 0)
    lines.push_back(fmt::format("No mark: no significant change of at least {}. {}",
                                format_percent(legend.min_change_pct), ci));
  else
    lines.push_back("No mark: no significant change. " + ci);
  return lines;
}

std::vector<std::string> environment_lines(const Table& table) {
  std::vector<std::string> lines;
  if (table.environment_differences.empty()) return lines;
  lines.push_back("Environment differences not declared by the swprofiles:");
  for (const std::string& difference : table.environment_differences) lines.push_back("  " + difference);
  return lines;
}

namespace {

// "8 undecided (about 4 more sessions a side would settle 6 of them)": what
// settling half of them would cost, which is what --until-decided would
// likely spend, and how many cells that settles.
std::string undecided_words(const Table& table, std::size_t column, int undecided) {
  std::vector<int> needed;
  int beyond = 0;
  int beyond_across_runs = 0;
  for (const Row& row : table.rows) {
    if (column >= row.cells.size() || row.cells[column].verdict != Verdict::Undecided) continue;
    const int sessions = row.cells[column].sessions_to_decide;
    if (sessions > kSessionsToDecideLimit) {
      ++beyond;
      if (row.cells[column].run_df > 0) ++beyond_across_runs;
    } else if (sessions > 0) {
      needed.push_back(sessions);
    }
  }
  std::string words = fmt::format("{} undecided", undecided);
  if (!needed.empty()) {
    // The fewest sessions that settle at least half of the undecided cells,
    // or as many as can be settled within the limit.
    std::sort(needed.begin(), needed.end());
    const std::size_t half = (static_cast<std::size_t>(undecided) + 1) / 2;
    const int median = needed[std::min(half, needed.size()) - 1];
    const auto settled = std::upper_bound(needed.begin(), needed.end(), median) - needed.begin();
    const std::string which = undecided == 1          ? "it"
                              : settled == undecided ? "all of them"
                                                     : fmt::format("{} of them", settled);
    words += fmt::format(" (about {} would settle {})",
                         count_noun(median, "more session a side", "more sessions a side"), which);
  } else if (beyond > 0 && beyond_across_runs == beyond) {
    // The drift between the sides' runs, not the sessions, keeps them open:
    // what decides them is a design that cancels it, or more runs.
    words += fmt::format(" (not within {} more sessions a side: the drift between the sides' runs dominates; "
                         "alternate the two in one `kbench plan exec`, or measure more runs with `kbench calibrate`)",
                         kSessionsToDecideLimit);
  } else if (beyond > 0) {
    words += fmt::format(" (not within {} more sessions a side)", kSessionsToDecideLimit);
  }
  return words;
}

}  // namespace

std::vector<std::string> summary_lines(const Table& table, const Legend& legend) {
  std::vector<std::string> lines{table.sut + ":"};
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const ColumnSummary& column = table.columns[c];
    // The seed's two counts always; the others when there are any, so a
    // table without them reads like the seed.
    std::vector<std::string> counts{count_noun(column.improvements, "improvement", "improvements"),
                                    count_noun(column.regressions, "regression", "regressions")};
    if (column.unchanged > 0)
      counts.push_back(fmt::format("{} unchanged within +/-{}", column.unchanged, format_percent(legend.min_change_pct)));
    if (column.undecided > 0) counts.push_back(undecided_words(table, c, column.undecided));
    if (column.untested > 0) counts.push_back(fmt::format("{} not tested", column.untested));
    if (table.columns.size() == 1) {
      lines.insert(lines.end(), counts.begin(), counts.end());
    } else {
      const std::string name = c < table.test_profiles.size() ? table.test_profiles[c] : "?";
      lines.push_back(name + ": " + fmt::format("{}", fmt::join(counts, ", ")));
    }
  }
  return lines;
}

std::vector<std::string> geomean_lines(const Table& table, SignConvention sign) {
  std::vector<std::string> lines;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const ColumnSummary& column = table.columns[c];
    const double change = geomean_change(column, sign);
    const std::string value = std::isnan(change) ? "n/a" : format_percent(change);
    const std::string name =
        table.columns.size() == 1 || c >= table.test_profiles.size() ? "" : " " + table.test_profiles[c];
    lines.push_back(fmt::format("geomean{} ({}): {} over {} rows", name, geomean_sense(sign), value, column.geomean_rows));
  }
  return lines;
}

}  // namespace kbench::report
