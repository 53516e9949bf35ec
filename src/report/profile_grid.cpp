// The single-profile table of `kbench run` / `kbench show`, in the grid layout.
#include <cmath>
#include <ostream>

#include "report/format.h"
#include "report/model.h"
#include "report/text_table.h"

namespace kbench::report {

void render_profile_grid(const ProfileTable& table, std::ostream& out) {
  TextTable text({{"Benchmark", Align::Left},
                  {"Result Class", Align::Left},
                  {"min", Align::Right},
                  {"ci95min", Align::Right},
                  {"mean", Align::Right},
                  {"ci95max", Align::Right},
                  {"max", Align::Right},
                  {"cv", Align::Right},
                  {"count", Align::Right}});
  const std::string* previous = nullptr;
  for (const ProfileRow& row : table.rows) {
    const bool new_group = previous == nullptr || *previous != row.benchmark;
    const stats::Summary& s = row.summary;
    // cv as a percent of the mean: comparable with the change column of compare.
    text.add_row({new_group ? row.benchmark : "", row.result_class.label(), format_number(s.min),
                  format_number(s.ci95_low), format_number(s.mean), format_number(s.ci95_high), format_number(s.max),
                  std::isnan(s.cv) ? "" : format_percent(s.cv * 100), std::to_string(s.count)},
                 new_group);
    previous = &row.benchmark;
  }
  out << "Results for SUT Class " << table.sut << ", swprofile " << table.swprofile << ":\n";
  if (!text.empty()) text.render_grid(out);
  for (const std::string& entry : table.skipped) out << "skipped: " << entry << '\n';
  for (const std::string& entry : table.failed) out << "failed: " << entry << '\n';
}

}  // namespace kbench::report
