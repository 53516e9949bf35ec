#pragma once
// `kbench noise`: the between-session noise report (analysis/noise.h) as a grid, CSV or JSON.
#include <iosfwd>

#include "analysis/noise.h"

namespace kbench::report {

// The noise view of the formats grid, csv and json (report/format_table.h).
void render_noise_grid(const analysis::NoiseReport& report, std::ostream& out);
void render_noise_csv(const analysis::NoiseReport& report, std::ostream& out);
void render_noise_json(const analysis::NoiseReport& report, std::ostream& out);

}  // namespace kbench::report
