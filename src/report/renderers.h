#pragma once
// Pieces the renderers share; not part of the model interface.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/kernel_time.h"
#include "report/model.h"
#include "report/text_table.h"

namespace kbench::report {

std::unique_ptr<Renderer> make_grid_renderer();
std::unique_ptr<Renderer> make_markdown_renderer();
std::unique_ptr<Renderer> make_delta_renderer();
std::unique_ptr<Renderer> make_mail_renderer();
std::unique_ptr<Renderer> make_csv_renderer();
std::unique_ptr<Renderer> make_json_renderer();
std::unique_ptr<Renderer> make_html_renderer();

// A layout that prints each table on its own, a blank line between tables.
class PerTableRenderer : public Renderer {
 public:
  void render(const analysis::Report& report, std::ostream& out) const final;

 private:
  virtual void render_table(const analysis::Table& table, const analysis::Legend& legend, std::ostream& out) const = 0;
};

// "Results for SUT <sut>:", or "Results for SUT Class <class>:" as in the seed
// when the table pools a class of machines.
std::string table_heading(const analysis::Table& table);

// Numbered footnotes for cells that carry no mark for a reason (too few
// samples, ...) or were tested on session means. One number per distinct text,
// in order of first use, so a 150-row table with one cause has one footnote.
class Footnotes {
 public:
  // " [1]" (several joined: " [1][2]") for the cell's reasons; "" when none.
  std::string markers(const analysis::Cell& cell);
  // "[1] <text>" lines in number order.
  std::vector<std::string> lines() const;

 private:
  std::string marker(const std::string& text);
  std::map<std::string, int> numbers_;
  std::vector<std::string> texts_;
};

inline constexpr const char* kSessionNoisyNote =
    "session-noisy: most variance lies between sessions (boots); tested on session means";
inline constexpr const char* kHeavyTailNote =
    "heavy tail: a side's mean lies above its p99 or is carried by a few extreme repeats; "
    "read the median and p99 rows";
inline constexpr const char* kBimodalNote =
    "bimodal: a side's samples fall into two separate groups; the mean describes neither";

// The legend under a table: method, multiple-comparison control, what the
// sessions were and where the SUT's noise model stood in (from `table`'s cells,
// when given), --until-decided looks, the sign convention of the change
// column, the marks, and the level of the change's CI. `change_is_raw` is for
// layouts that always print the raw change (markdown, delta).
std::vector<std::string> legend_lines(const analysis::Legend& legend, bool change_is_raw,
                                      const analysis::Table* table = nullptr);

// Summary counts per column, seed style: "<sut>:", then "21 improvements" and
// "1 regression" lines for one test column, then "120 unchanged within
// +/-2.00%", "8 undecided (about 4 more sessions a side would settle 6 of
// them)", "3 not tested" when non-zero; with several test columns one line per
// column naming it, the counts joined by ", ".
std::vector<std::string> summary_lines(const analysis::Table& table, const analysis::Legend& legend);

// Table::environment_differences under a heading, each indented by two
// spaces; nothing when there are none.
std::vector<std::string> environment_lines(const analysis::Table& table);


// "geomean (positive = better): 1.23% over 44 rows" — one line per column,
// naming the column when there are several; `sign` is the convention the
// rows beside it are printed in.
std::vector<std::string> geomean_lines(const analysis::Table& table, analysis::SignConvention sign);

// Under a markdown or delta table, whose change column is always raw: the
// legend, `layout_lines` explaining the layout's own columns, geomean,
// footnotes, environment differences, where the kernel time went, a blank
// line and the summary.
void write_raw_change_notes(const analysis::Table& table, const analysis::Legend& legend, const Footnotes& notes,
                            const std::vector<std::string>& layout_lines, std::ostream& out);

// How a layout that prints the raw change writes it: "↑1.1%", "1.54 (-11.1%)".
using RawChangeText = std::string (*)(const analysis::Row& row, const analysis::Cell& cell, double raw_percent);

// A raw change column's cell: `text` of the change, then the mark and the
// footnote markers; the markers alone when there is no change to show.
std::string raw_change_cell(const analysis::Row& row, const analysis::Cell& cell, RawChangeText text, Footnotes& notes);

// The pipe table of markdown and delta: per row its name and result class,
// the base mean, then per test profile its mean and raw_change_cell. The
// `columns` name them; `separator`: markdown's `| --- |` row under the header.
void write_pipe_table(const analysis::Table& table, std::vector<TextColumn> columns, RawChangeText text, bool separator,
                      Footnotes& notes, std::ostream& out);

// A '|' inside a cell would end the cell in markdown and pipe tables: "\|".
std::string escape_pipes(const std::string& text);

// The change column of grid and mail: mark, signed change and footnote
// markers; only the markers when there is no change to show.
std::string change_cell(const analysis::Row& row, const analysis::Cell& cell, analysis::SignConvention sign,
                        Footnotes& notes);

}  // namespace kbench::report
