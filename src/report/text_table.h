#pragma once
// A small text-table engine shared by the text renderers.
#include <iosfwd>
#include <string>
#include <vector>

namespace kbench::report {

enum class Align { Left, Right };

struct TextColumn {
  std::string header;
  Align align = Align::Left;
  // Grid only: a cell wider than this many display columns is word-wrapped
  // onto more lines of its row, continuation lines indented by
  // `wrap_indent`; 0: no limit. Pipe tables cannot break a cell, so they
  // ignore it.
  std::size_t max_width = 0;
  std::size_t wrap_indent = 2;
};

class TextTable {
 public:
  explicit TextTable(std::vector<TextColumn> columns);

  // A row with one cell per column. `new_group` puts a rule before it in the
  // grid style (the seed separates benchmarks, not rows).
  void add_row(std::vector<std::string> cells, bool new_group = false);
  bool empty() const { return rows_.empty(); }

  // Python tabulate's "grid" layout as in the seed report: column width =
  // max(header + 2, widest cell line), one space of padding, the header
  // aligned like its column, `+===+` under the header and `+---+` between
  // groups only. A wrapped cell's lines stand under each other, the other
  // cells of the row on its first line. Widths are display columns.
  void render_grid(std::ostream& out) const;

  // The seed patch's markdown: every column left-aligned and padded to its
  // widest cell, a `| --- |` separator padded the same way.
  void render_markdown(std::ostream& out) const;

  // Like markdown without the separator row: the seed delta table's layout.
  void render_pipes(std::ostream& out) const;

 private:
  struct Line {
    std::vector<std::string> cells;
    bool new_group = false;
  };
  std::vector<std::size_t> widths(std::size_t header_extra, bool wrapped) const;
  std::vector<std::string> cell_lines(const std::string& cell, std::size_t column) const;
  void render_piped(std::ostream& out, bool separator) const;

  std::vector<TextColumn> columns_;
  std::vector<Line> rows_;
};

// Pads `text` to `width` display columns.
std::string pad(const std::string& text, std::size_t width, Align align);

}  // namespace kbench::report
