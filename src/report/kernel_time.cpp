#include "report/kernel_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ostream>

#include "analysis/kernel_profile.h"
#include "report/format.h"
#include "report/text_table.h"

namespace kbench::report {

using analysis::KernelTimeShift;
using analysis::Table;
using analysis::Verdict;

namespace {

std::string side_counts(const std::string& swprofile, int sessions, std::uint64_t samples) {
  return fmt::format("{}: {}, {} kernel samples", swprofile, count_noun(sessions, "session", "sessions"), samples);
}

KernelTimeBlock block_of(const Table& table, const RowNames& names, const KernelTimeShift& shift, CodeText code) {
  const std::string& test_profile = table.test_profiles.at(shift.column);
  const std::string subject = fmt::format("{}{} in {}", code(names.name(shift.benchmark, shift.params)),
                                          mark_suffix(shift.verdict), test_profile);
  KernelTimeBlock block;
  if (!shift.unavailable.empty()) {
    block.heading = subject + ": profile unavailable: " + shift.unavailable;
    return block;
  }
  const bool regression = shift.verdict == Verdict::Regression;
  const std::string counts =
      fmt::format("({}; {})", side_counts(table.base_profile, shift.base_sessions, shift.base_samples),
                  side_counts(test_profile, shift.test_sessions, shift.test_samples));
  if (analysis::rough_shares(shift.base_samples, shift.test_samples)) {
    block.items.push_back(rough_shares_note(shift.base_samples, shift.test_samples));
  }
  if (shift.functions.empty()) {
    block.heading = fmt::format("{}: no function {} share {}", subject, regression ? "gained" : "lost", counts);
    return block;
  }
  block.heading = fmt::format("{}: the functions that {} the most share {}", subject,
                              regression ? "gained" : "lost", counts);
  // The names and both shares in columns, so the three read as a table.
  std::size_t widths[3] = {0, 0, 0};
  std::vector<std::array<std::string, 3>> cells;
  for (const auto& function : shift.functions) {
    cells.push_back({code(function.function), format_percent(100 * function.share_a, 1),
                     format_percent(100 * function.share_b, 1)});
    for (std::size_t i = 0; i < 3; ++i) widths[i] = std::max(widths[i], display_width(cells.back()[i]));
  }
  for (std::size_t f = 0; f < cells.size(); ++f) {
    const auto& timed = shift.functions[f].timed;
    block.items.push_back(fmt::format(
        "{}  {} → {}  ({} → {} samples){}", pad(cells[f][0], widths[0], Align::Left),
        pad(cells[f][1], widths[1], Align::Right), pad(cells[f][2], widths[2], Align::Right),
        shift.functions[f].samples_a, shift.functions[f].samples_b,
        timed ? fmt::format("; its kfunc/ time per call {}{}{}", timed->change_pct > 0 ? "+" : "",
                            format_percent(timed->change_pct), mark_suffix(timed->verdict))
              : ""));
  }
  // One line for the three commands (kfunc_commands has each in full),
  // unless the table has the timing already.
  const std::string& function = shift.functions.front().function;
  if (shift.functions.front().timed) return block;
  const std::string both_runs =
      analysis::kfunc_command(table.base_profile + "|" + test_profile, function, shift.benchmark);
  block.items.push_back(fmt::format("time it: {}, then {}", code(both_runs),
                                    code(analysis::kfunc_compare_command(table.base_profile, test_profile, function))));
  return block;
}

}  // namespace

std::vector<KernelTimeBlock> kernel_time_blocks(const Table& table, CodeText code) {
  std::vector<KernelTimeBlock> blocks;
  const RowNames names(table);
  for (const KernelTimeShift& shift : table.kernel_time) blocks.push_back(block_of(table, names, shift, code));
  return blocks;
}

std::string plain_text(const std::string& text) { return text; }

std::string rough_shares_note(std::uint64_t samples_a, std::uint64_t samples_b) {
  return fmt::format("The shares rest on {} and {} kernel samples and are rough (fewer than {} on a side)", samples_a,
                     samples_b, analysis::kRoughShareSamples);
}

std::vector<std::string> kernel_time_lines(const Table& table) {
  std::vector<std::string> lines;
  if (table.kernel_time.empty()) return lines;
  lines.push_back(kKernelTimeHeading);
  for (const KernelTimeBlock& block : kernel_time_blocks(table, plain_text)) {
    lines.push_back("  " + block.heading);
    for (const std::string& item : block.items) lines.push_back("    " + item);
  }
  return lines;
}

void write_kernel_time_list(const Table& table, std::ostream& out) {
  if (table.kernel_time.empty()) return;
  out << '\n' << kKernelTimeHeading << '\n';
  const auto code = [](const std::string& text) { return "`" + text + "`"; };
  for (const KernelTimeBlock& block : kernel_time_blocks(table, code)) {
    out << '\n' << block.heading << '\n';
    for (const std::string& item : block.items) out << "- " << item << '\n';
  }
}

}  // namespace kbench::report
