// Plain text for a mail client: every line fits 80 columns. Benchmarks head
// their group on a line of their own, result classes wrap inside their column
// (never truncated), and test profiles get one-letter keys listed under the
// table, because profile names are often longer than the numbers below them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

using analysis::Legend;
using analysis::Row;
using analysis::Table;

namespace {

constexpr std::size_t kLineWidth = 80;
constexpr std::size_t kGap = 2;             // spaces between columns
constexpr std::size_t kMinLabelWidth = 30;  // below this, split the test columns into several tables

// Rows whose last cells are empty would otherwise end in spaces, which mail
// tools and checkpatch flag.
std::string rtrim(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

// A, B, ..., Z, AA, AB, ...: the n-th key of the sequence.
std::string nth_key(std::size_t index) {
  std::string key;
  for (std::size_t i = index + 1; i > 0; i = (i - 1) / 26) key.insert(key.begin(), static_cast<char>('A' + (i - 1) % 26));
  return key;
}

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)); });
}

// One key per test column. A key never equals (ignoring case) the name of a
// profile other than the one it stands for: with profiles named
// A and B, "A: B" would make "A" mean two things. A key may equal its own
// profile's name ("B: B").
std::vector<std::string> column_keys(const Table& table) {
  std::vector<std::string> keys;
  std::size_t next = 0;
  for (std::size_t t = 0; t < table.test_profiles.size(); ++t) {
    for (;; ++next) {
      const std::string key = nth_key(next);
      bool collides = same_name(key, table.base_profile);
      for (std::size_t other = 0; other < table.test_profiles.size() && !collides; ++other)
        collides = other != t && same_name(key, table.test_profiles[other]);
      if (!collides) break;
    }
    keys.push_back(nth_key(next++));
  }
  return keys;
}

class MailRenderer : public PerTableRenderer {
 private:
  struct Block {
    std::vector<std::size_t> tests;  // indices into table.test_profiles
  };

  void render_table(const Table& table, const Legend& legend, std::ostream& out) const override {
    const std::size_t tests = table.test_profiles.size();
    const std::vector<std::string> keys = column_keys(table);
    Footnotes notes;
    // The cells first, so column widths and footnote numbers are known.
    std::vector<std::string> base_cells;
    std::vector<std::vector<std::string>> test_cells(table.rows.size());
    std::size_t base_width = display_width("base");
    std::vector<std::size_t> test_width(tests);
    for (std::size_t t = 0; t < tests; ++t) test_width[t] = display_width(keys[t]);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const Row& row = table.rows[r];
      base_cells.push_back(row.base_present ? format_number(row.base.mean) : "");
      base_width = std::max(base_width, display_width(base_cells.back()));
      for (std::size_t t = 0; t < tests; ++t) {
        test_cells[r].push_back(t < row.cells.size() ? change_cell(row, row.cells[t], legend.sign, notes) : "");
        test_width[t] = std::max(test_width[t], display_width(test_cells[r].back()));
      }
    }
    // Split the test columns into blocks that leave the labels enough room.
    std::vector<Block> blocks;
    std::size_t used = base_width + kGap;
    for (std::size_t t = 0; t < tests; ++t) {
      if (blocks.empty() || used + test_width[t] + kGap + kMinLabelWidth > kLineWidth) {
        blocks.push_back({});
        used = base_width + kGap;
      }
      blocks.back().tests.push_back(t);
      used += test_width[t] + kGap;
    }
    if (blocks.empty()) blocks.push_back({});

    for (const std::string& line : wrap_text(table_heading(table), kLineWidth, 2)) out << line << '\n';
    for (const Block& block : blocks) {
      std::size_t numbers = base_width;
      for (std::size_t t : block.tests) numbers += kGap + test_width[t];
      const std::size_t label_width = kLineWidth - numbers - kGap;
      auto numbers_line = [&](const std::string& base, const std::vector<std::string>& cells) {
        std::string line = pad(base, base_width, Align::Right);
        for (std::size_t i = 0; i < block.tests.size(); ++i)
          line += std::string(kGap, ' ') + pad(cells[i], test_width[block.tests[i]], Align::Right);
        return line;
      };
      std::vector<std::string> headers;
      for (std::size_t t : block.tests) headers.push_back(keys[t]);
      out << '\n' << pad("Benchmark / result class", label_width, Align::Left) << std::string(kGap, ' ')
          << numbers_line("base", headers) << '\n';
      out << std::string(kLineWidth, '-') << '\n';
      const RowNames names(table);
      std::string previous;
      for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const Row& row = table.rows[r];
        const std::string name = names(row);
        if (r == 0 || previous != name)
          for (const std::string& line : wrap_text(name, kLineWidth, 2)) out << line << '\n';
        previous = name;
        std::vector<std::string> cells;
        for (std::size_t t : block.tests) cells.push_back(test_cells[r][t]);
        const std::vector<std::string> label = wrap_text(row.result_class.label(), label_width - 2, 2);
        for (std::size_t i = 0; i < label.size(); ++i) {
          std::string line = "  " + label[i];
          if (i == 0) line = pad(line, label_width, Align::Left) + std::string(kGap, ' ') + numbers_line(base_cells[r], cells);
          out << rtrim(line) << '\n';
        }
      }
      out << std::string(kLineWidth, '-') << '\n';
    }
    std::vector<std::string> text{"base: " + table.base_profile};
    for (std::size_t t = 0; t < tests; ++t) text.push_back(keys[t] + ": " + table.test_profiles[t]);
    for (const std::string& line : legend_lines(legend, false, &table)) text.push_back(line);
    for (const std::string& line : geomean_lines(table, legend.sign)) text.push_back(line);
    for (const std::string& line : notes.lines()) text.push_back(line);
    for (const std::string& paragraph : text)
      for (const std::string& line : wrap_text(paragraph, kLineWidth, 4)) out << line << '\n';
    // Items keep their indent; their continuation lines are indented by two
    // more. A line that fits is kept as it is (its columns stay aligned).
    std::vector<std::string> listed = environment_lines(table);
    for (std::string& line : kernel_time_lines(table)) listed.push_back(std::move(line));
    for (const std::string& paragraph : listed) {
      if (display_width(paragraph) <= kLineWidth) {
        out << paragraph << '\n';
        continue;
      }
      const std::size_t indent = std::min(paragraph.find_first_not_of(' '), paragraph.size());
      for (const std::string& line : wrap_text(paragraph.substr(indent), kLineWidth - indent, 2))
        out << std::string(indent, ' ') << line << '\n';
    }
    out << '\n';
    for (const std::string& paragraph : summary_lines(table, legend))
      for (const std::string& line : wrap_text(paragraph, kLineWidth, 4)) out << line << '\n';
  }
};

}  // namespace

std::unique_ptr<Renderer> make_mail_renderer() { return std::make_unique<MailRenderer>(); }

}  // namespace kbench::report
