// Plain text for a mail client: every line fits 80 columns. Benchmarks head
// their group on a line of their own, result classes wrap inside their column
// (never truncated), and test profiles get one-letter keys listed under the
// table, because profile names are often longer than the numbers below them.
#include <cmath>
#include <fmt/format.h>
#include <ostream>

#include "report/format.h"
#include "report/renderers.h"
#include "report/text_table.h"

namespace kbench::report {

namespace {

constexpr std::size_t kLineWidth = 80;
constexpr std::size_t kGap = 2;             // spaces between columns
constexpr std::size_t kMinLabelWidth = 30;  // below this, split the test columns into several tables

// Byte length of the first `columns` code points of `text`.
std::size_t prefix_bytes(std::string_view text, std::size_t columns) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == columns) return i;
      ++seen;
    }
  }
  return text.size();
}

// Word wrap to `width` columns; continuation lines start with `indent`
// spaces; a word longer than a line is split, not cut.
std::vector<std::string> wrap(std::string_view text, std::size_t width, std::size_t indent = 0) {
  std::vector<std::string> lines;
  std::string line;
  auto room = [&] { return width - (lines.empty() ? 0 : indent); };
  auto flush = [&] {
    lines.push_back((lines.empty() ? "" : std::string(indent, ' ')) + line);
    line.clear();
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t space = text.find(' ', pos);
    std::string_view word = text.substr(pos, space == std::string_view::npos ? text.size() - pos : space - pos);
    pos = space == std::string_view::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    const std::size_t needed = display_width(line) + (line.empty() ? 0 : 1) + display_width(word);
    if (needed <= room()) {
      line += (line.empty() ? "" : " ") + std::string(word);
      continue;
    }
    if (!line.empty()) flush();
    while (display_width(word) > room()) {
      const std::size_t cut = prefix_bytes(word, room());
      line = std::string(word.substr(0, cut));
      flush();
      word = word.substr(cut);
    }
    line = std::string(word);
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

// Rows whose last cells are empty would otherwise end in spaces, which mail
// tools and checkpatch flag.
std::string rtrim(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

std::string column_key(std::size_t index) {
  std::string key;
  for (std::size_t i = index + 1; i > 0; i = (i - 1) / 26) key.insert(key.begin(), static_cast<char>('A' + (i - 1) % 26));
  return key;
}

class MailRenderer : public PerTableRenderer {
 private:
  struct Block {
    std::vector<std::size_t> tests;  // indices into table.test_profiles
  };

  void render_table(const Table& table, const Legend& legend, std::ostream& out) const override {
    const std::size_t tests = table.test_profiles.size();
    Footnotes notes;
    // The cells first, so column widths and footnote numbers are known.
    std::vector<std::string> base_cells;
    std::vector<std::vector<std::string>> test_cells(table.rows.size());
    std::size_t base_width = display_width("base");
    std::vector<std::size_t> test_width(tests);
    for (std::size_t t = 0; t < tests; ++t) test_width[t] = display_width(column_key(t));
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

    for (const std::string& line : wrap(table_heading(table), kLineWidth, 2)) out << line << '\n';
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
      for (std::size_t t : block.tests) headers.push_back(column_key(t));
      out << '\n' << pad("Benchmark / result class", label_width, Align::Left) << std::string(kGap, ' ')
          << numbers_line("base", headers) << '\n';
      out << std::string(kLineWidth, '-') << '\n';
      const std::string* previous = nullptr;
      for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const Row& row = table.rows[r];
        if (previous == nullptr || *previous != row.benchmark)
          for (const std::string& line : wrap(row.benchmark, kLineWidth, 2)) out << line << '\n';
        previous = &row.benchmark;
        std::vector<std::string> cells;
        for (std::size_t t : block.tests) cells.push_back(test_cells[r][t]);
        const std::vector<std::string> label = wrap(row.result_class.label(), label_width - 2, 2);
        for (std::size_t i = 0; i < label.size(); ++i) {
          std::string line = "  " + label[i];
          if (i == 0) line = pad(line, label_width, Align::Left) + std::string(kGap, ' ') + numbers_line(base_cells[r], cells);
          out << rtrim(line) << '\n';
        }
      }
      out << std::string(kLineWidth, '-') << '\n';
    }
    std::vector<std::string> text{"base: " + table.base_profile};
    for (std::size_t t = 0; t < tests; ++t) text.push_back(column_key(t) + ": " + table.test_profiles[t]);
    for (const std::string& line : legend_lines(legend, false)) text.push_back(line);
    for (const std::string& line : geomean_lines(table)) text.push_back(line);
    for (const std::string& line : notes.lines()) text.push_back(line);
    for (const std::string& paragraph : text)
      for (const std::string& line : wrap(paragraph, kLineWidth, 4)) out << line << '\n';
    out << '\n';
    for (const std::string& paragraph : summary_lines(table))
      for (const std::string& line : wrap(paragraph, kLineWidth, 4)) out << line << '\n';
  }
};

}  // namespace

std::unique_ptr<Renderer> make_mail_renderer() { return std::make_unique<MailRenderer>(); }

}  // namespace kbench::report
