#include "report/format_table.h"

#include <fmt/format.h>

#include "common/errors.h"
#include "common/spoken_list.h"
#include "report/noise_report.h"
#include "report/renderers.h"
#include "report/trend.h"

namespace kbench::report {

namespace {

// One line per format, in --help order. `text` is trend's name for its
// terminal layout, which no other command has.
constexpr Format kFormats[] = {
    {.name = "grid", .shows_kernel_time = true, .comparison = make_grid_renderer, .noise = render_noise_grid},
    {.name = "text", .trend = render_trend_text},
    {.name = "markdown", .raw_change_only = true, .shows_kernel_time = true, .comparison = make_markdown_renderer},
    {.name = "delta", .raw_change_only = true, .shows_kernel_time = true, .comparison = make_delta_renderer,
     .scenarios = render_scenario_delta},
    {.name = "mail", .shows_kernel_time = true, .comparison = make_mail_renderer},
    {.name = "csv", .machine_readable = true, .comparison = make_csv_renderer, .noise = render_noise_csv,
     .samples = make_csv_sample_writer},
    {.name = "json", .machine_readable = true, .shows_kernel_time = true, .comparison = make_json_renderer,
     .noise = render_noise_json, .samples = make_json_sample_writer},
    {.name = "html", .machine_readable = true, .needs_session_samples = true, .shows_kernel_time = true,
     .comparison = make_html_renderer, .trend = render_trend_html},
};

}  // namespace

bool Format::renders(View view) const {
  switch (view) {
    case View::Comparison: return comparison != nullptr;
    case View::Scenarios: return scenarios != nullptr;
    case View::Noise: return noise != nullptr;
    case View::Trend: return trend != nullptr;
    case View::Samples: return samples != nullptr;
  }
  return false;
}

std::span<const Format> formats() { return kFormats; }

std::vector<std::string_view> format_names(View view) {
  std::vector<std::string_view> names;
  for (const Format& format : kFormats)
    if (format.renders(view)) names.push_back(format.name);
  return names;
}

std::string format_choices(View view) { return spoken_list(format_names(view)); }

const Format& find_format(std::string_view name, View view) {
  for (const Format& format : kFormats)
    if (format.name == name && format.renders(view)) return format;
  throw InputError(fmt::format("--format {}: expected {}", name, format_choices(view)));
}

std::unique_ptr<Renderer> make_renderer(std::string_view format) {
  return find_format(format, View::Comparison).comparison();
}

}  // namespace kbench::report
