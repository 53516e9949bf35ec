#pragma once
// Every output format, one entry each: its name, its traits and the views it
// renders. The commands ask an entry what they need to know (where notes go,
// whether to keep every session's samples) and take the names they list in
// --help and in errors from here, so a new format is its renderer file and
// its entry in format_table.cpp, and no command names a format.
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/noise.h"
#include "analysis/trend.h"
#include "report/model.h"
#include "report/sample_export.h"

namespace kbench::report {

// What a command renders: compare's report, compare --scenario's table,
// noise's report, trend's report, export's stream of samples.
enum class View { Comparison, Scenarios, Noise, Trend, Samples };

struct Format {
  std::string_view name;
  // Stdout is one document a program reads (or a page): the notes compare
  // prints under a table go to stderr instead, where they cannot break it.
  bool machine_readable = false;
  // Plots every session's samples (analysis::CompareOptions::keep_samples),
  // which the other formats do not pay for copying.
  bool needs_session_samples = false;
  // Prints the raw change whatever --sign says (its seed's layout), so
  // compare refuses --sign better with it.
  bool raw_change_only = false;
  // Shows where a marked benchmark's kernel time went
  // (analysis::Table::kernel_time), so compare reads the stored kernel
  // profiles for it; the others are spared the reads.
  bool shows_kernel_time = false;

  // One renderer per view; nullptr: the format does not render that view.
  std::unique_ptr<Renderer> (*comparison)() = nullptr;
  void (*scenarios)(const std::vector<Scenario>& scenarios, std::ostream& out) = nullptr;
  void (*noise)(const analysis::NoiseReport& report, std::ostream& out) = nullptr;
  // `title`: the page's title, for the formats that have one.
  void (*trend)(const analysis::TrendReport& trend, const std::string& title, std::ostream& out) = nullptr;
  std::unique_ptr<SampleWriter> (*samples)(std::ostream& out) = nullptr;

  bool renders(View view) const;
};

// Every format, in the order --help lists them.
std::span<const Format> formats();

// The names of the formats that render `view`, in table order.
std::vector<std::string_view> format_names(View view);

// Those names as a sentence: "grid, csv or json", "delta".
std::string format_choices(View view);

// The entry called `name`, which renders `view`; throws InputError
// "--format NAME: expected grid, csv or json" (the formats of that view)
// otherwise.
const Format& find_format(std::string_view name, View view);

}  // namespace kbench::report
