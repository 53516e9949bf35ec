#pragma once
// `kbench noise`: the between-session noise report (analysis/noise.h) as a grid, CSV or JSON.
#include <iosfwd>
#include <string>

#include "analysis/noise.h"

namespace kbench::report {

enum class NoiseFormat { Grid, Csv, Json };

// "grid" | "csv" | "json"; throws InputError naming --format otherwise.
NoiseFormat parse_noise_format(const std::string& text);

void render_noise(const analysis::NoiseReport& report, NoiseFormat format, std::ostream& out);

}  // namespace kbench::report
