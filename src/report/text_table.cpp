#include "report/text_table.h"

#include <ostream>

#include "common/errors.h"
#include "report/format.h"

namespace kbench::report {

TextTable::TextTable(std::vector<TextColumn> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells, bool new_group) {
  // A short row is a programming error in a renderer, not bad user input.
  if (cells.size() != columns_.size()) throw std::logic_error("TextTable: row width != column count");
  rows_.push_back({std::move(cells), new_group});
}

std::string pad(const std::string& text, std::size_t width, Align align) {
  const std::size_t used = display_width(text);
  if (used >= width) return text;
  const std::string fill(width - used, ' ');
  return align == Align::Left ? text + fill : fill + text;
}

std::vector<std::string> TextTable::cell_lines(const std::string& cell, std::size_t column) const {
  const std::size_t limit = columns_[column].max_width;
  if (limit == 0 || display_width(cell) <= limit) return {cell};
  return wrap_text(cell, limit, columns_[column].wrap_indent);
}

std::vector<std::size_t> TextTable::widths(std::size_t header_extra, bool wrapped) const {
  std::vector<std::size_t> result;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    std::size_t width = display_width(columns_[c].header) + header_extra;
    for (const Line& row : rows_) {
      if (!wrapped) {
        width = std::max(width, display_width(row.cells[c]));
        continue;
      }
      for (const std::string& line : cell_lines(row.cells[c], c)) width = std::max(width, display_width(line));
    }
    result.push_back(width);
  }
  return result;
}

void TextTable::render_grid(std::ostream& out) const {
  const std::vector<std::size_t> width = widths(2, true);
  auto rule = [&](char fill) {
    out << '+';
    for (std::size_t w : width) out << std::string(w + 2, fill) << '+';
    out << '\n';
  };
  auto line = [&](const std::vector<std::string>& cells) {
    out << '|';
    for (std::size_t c = 0; c < cells.size(); ++c)
      out << ' ' << pad(cells[c], width[c], columns_[c].align) << " |";
    out << '\n';
  };
  rule('-');
  std::vector<std::string> headers;
  for (const TextColumn& column : columns_) headers.push_back(column.header);
  line(headers);
  rule('=');
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    if (r > 0 && rows_[r].new_group) rule('-');
    std::vector<std::vector<std::string>> wrapped;
    std::size_t height = 1;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      wrapped.push_back(cell_lines(rows_[r].cells[c], c));
      height = std::max(height, wrapped.back().size());
    }
    for (std::size_t i = 0; i < height; ++i) {
      std::vector<std::string> cells;
      for (const auto& lines : wrapped) cells.push_back(i < lines.size() ? lines[i] : "");
      line(cells);
    }
  }
  if (!rows_.empty()) rule('-');
}

void TextTable::render_piped(std::ostream& out, bool separator) const {
  const std::vector<std::size_t> width = widths(0, false);
  auto line = [&](const std::vector<std::string>& cells) {
    out << '|';
    for (std::size_t c = 0; c < cells.size(); ++c) out << ' ' << pad(cells[c], width[c], Align::Left) << " |";
    out << '\n';
  };
  std::vector<std::string> headers;
  for (const TextColumn& column : columns_) headers.push_back(column.header);
  line(headers);
  if (separator) {
    std::vector<std::string> dashes;
    for (std::size_t w : width) dashes.emplace_back(w, '-');
    line(dashes);
  }
  for (const Line& row : rows_) line(row.cells);
}

void TextTable::render_markdown(std::ostream& out) const { render_piped(out, true); }
void TextTable::render_pipes(std::ostream& out) const { render_piped(out, false); }

}  // namespace kbench::report
