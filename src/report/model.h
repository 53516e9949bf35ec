#pragma once
// Rendering the report model (analysis/report_model.h): one file per output
// format in src/report/.
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report_model.h"

namespace kbench::report {

// "Results for SUT vm" / "Results for SUT Class aws-m7g.metal": the words
// before the colon of every table heading.
std::string sut_heading(const std::string& sut, analysis::SutScope scope);

class Renderer {
 public:
  virtual ~Renderer() = default;
  virtual void render(const analysis::Report& report, std::ostream& out) const = 0;
};

// The comparison renderer of the format called `format` (report/format_table.h);
// throws InputError naming the format and the known formats.
std::unique_ptr<Renderer> make_renderer(std::string_view format);

// One scenario of `kbench compare --format delta --scenario LABEL=BASE:TEST`:
// its label and the report of BASE against TEST alone (one test profile), as
// `kbench compare BASE TEST` builds it, so its marks are that compare's.
struct Scenario {
  std::string label;
  analysis::Report report;
};

// The seed-003 layout (tests/golden/seed-delta-context-switch.txt): per SUT,
// one `| test scenario | old | new | delta |` table per benchmark row (its
// name and class as a caption above it), one line per scenario; below, what
// old and new are in each scenario, the legend and the footnotes.
void render_scenario_delta(const std::vector<Scenario>& scenarios, std::ostream& out);

struct ProfileGridOptions {
  // false: Benchmark | Result Class | mean | ±ci95 | cv | count, which fits a
  // terminal; true: also min, ci95min, ci95max and max.
  bool all_columns = false;
};

// The single-profile table (kbench run, kbench show) in the grid layout,
// values in the result class's unit (docs/reports.md).
void render_profile_grid(const analysis::ProfileTable& table, std::ostream& out,
                         const ProfileGridOptions& options = {});

}  // namespace kbench::report
