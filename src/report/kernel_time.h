#pragma once
// Where a marked benchmark's kernel time went (analysis::Table::kernel_time)
// as text: the report formats print it under a table, bisect under a
// confirmed culprit.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/report_model.h"

namespace kbench::report {

// Table::kernel_time, one block per marked benchmark: a heading that names
// the row, its mark, the test profile and both sides' sessions and samples
// (or why there is no profile), then a note when a side has too few samples
// for its shares to be more than rough, one item per function (its share
// and samples on both sides) and the commands that time the first.
struct KernelTimeBlock {
  std::string heading;
  std::vector<std::string> items;
};
inline constexpr const char* kKernelTimeHeading =
    "Where the kernel time went (kernel profiles: each function's share of a side's kernel samples):";
// How a layout sets names and commands apart: markdown's `code`; plain_text
// leaves them as they are.
using CodeText = std::string (*)(const std::string& text);
std::string plain_text(const std::string& text);
// Said of a side-by-side profile when analysis::rough_shares holds.
std::string rough_shares_note(std::uint64_t samples_a, std::uint64_t samples_b);
std::vector<KernelTimeBlock> kernel_time_blocks(const analysis::Table& table, CodeText code);

// The blocks as plain lines: kKernelTimeHeading, each block's heading
// indented by two, its items by four; nothing when the table has none.
std::vector<std::string> kernel_time_lines(const analysis::Table& table);

// The blocks as markdown, for the layouts that print the raw change
// (markdown, delta): a paragraph per block heading, its items a list, names
// and commands as `code` (a name's underscores would read as emphasis).
void write_kernel_time_list(const analysis::Table& table, std::ostream& out);

}  // namespace kbench::report
