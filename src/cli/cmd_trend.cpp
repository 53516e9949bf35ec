// kbench trend: one metric across many kernels, with change points.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fnmatch.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <ranges>

#include "analysis/runs.h"
#include "analysis/trend.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/trend_request.h"
#include "common/errors.h"
#include "report/format_table.h"

namespace kbench::cli {

namespace {

// The swprofiles matching the glob, by the start of their first session
// (ties: store id), which is the order they were measured in.
std::vector<std::string> matching_in_store_order(store::ResultStore& store, const std::string& url,
                                                 const std::string& glob) {
  std::vector<std::string> names;
  for (const auto& listing : store.list_swprofiles("*")) {
    if (fnmatch(glob.c_str(), listing.name.c_str(), 0) == 0) names.push_back(listing.name);
  }
  if (names.empty()) {
    const auto listings = store.list_swprofiles("*");
    const std::string known =
        fmt::format("{}", fmt::join(listings | std::views::transform(&store::SwprofileListing::name), ", "));
    throw InputError("--swprofile " + glob + ": matches no swprofile in " + url + " (known: " +
                     (known.empty() ? std::string("none") : known) + ")");
  }
  std::map<std::string, std::pair<std::string, std::int64_t>> first;  // name -> (started_at, id)
  for (const auto& session : store.list_sessions(names)) {
    const auto key = std::pair(session.started_at, session.id);
    const auto found = first.find(session.swprofile);
    if (found == first.end() || key < found->second) first[session.swprofile] = key;
  }
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return first[a] < first[b];
  });
  return names;
}

}  // namespace

void write_trend(const TrendRequest& request, std::ostream& out) {
  if (request.swprofile_glob.empty()) throw InputError("trend: --swprofile GLOB is required");
  const std::string glob = parse_glob("--swprofile", request.swprofile_glob);
  const auto order = analysis::parse_trend_order(request.order);
  const report::Format& format = report::find_format(request.format, report::View::Trend);
  if (request.sign != "better" && request.sign != "raw")
    throw InputError("--sign " + request.sign + ": expected better or raw");
  analysis::TrendOptions options;
  options.sign = request.sign == "raw" ? report::SignConvention::Raw : report::SignConvention::Better;
  options.min_change_pct = parse_min_change(request.min_change);
  options.min_segment = static_cast<std::size_t>(parse_integer("--min-segment", request.min_segment, 1, 1000));

  const OpenedStore opened = open_existing_store(request.store_url);
  auto& store = *opened.store;
  const auto profiles = analysis::order_swprofiles(matching_in_store_order(store, opened.url, glob), order);
  options.swprofiles = profiles.names;
  store::SampleQuery query = request.filter;
  query.swprofiles.clear();  // all: the others are the SUT's noise model in the step tests
  query.settled_only = true;
  const auto samples = store.samples(query);
  analysis::TrendReport trend = analysis::build_trend(samples, options, analysis::session_origins(store));
  trend.profiles = profiles;
  if (trend.rows.empty()) {
    throw InputError("trend: no rows of the swprofiles matching '" + request.swprofile_glob +
                     "' match --sut/--benchmark/--resultclass");
  }
  format.trend(trend, "kbench trend " + request.swprofile_glob, out);
}

void add_trend_command(CLI::App& app) {
  auto request = std::make_shared<TrendRequest>();
  CLI::App* cmd = app.add_subcommand("trend", "One metric across many swprofiles (kernels), with change points");
  cmd->add_option("--swprofile", request->swprofile_glob, "the swprofiles of the trend (a glob)")->required();
  add_sample_filter_options(*cmd, request->filter);
  cmd->add_option("--order", request->order,
                  "version: by the kernel version in the swprofile names (6.12.0-rc3 < 6.12 < v6.13; names that are "
                  "not versions fall back to store order, and the output says so); store: by first session "
                  "(default: version)");
  cmd->add_option("--format", request->format,
                  "output format: " + report::format_choices(report::View::Trend) + " (default: " + request->format +
                      ")");
  cmd->add_option("--sign", request->sign, "better: positive change means better (default); raw");
  cmd->add_option("--min-change", request->min_change,
                  "smallest step in percent worth a mark, 0 or 0.01 to 1000 (default 2), as in compare");
  cmd->add_option("--min-segment", request->min_segment,
                  "fewest swprofiles in a segment between change points (default 1: the newest kernel alone can be a step)");
  add_store_option(*cmd, request->store_url);
  cmd->footer(
      "Examples:\n"
      "  kbench trend --swprofile '6.1[23]*' --benchmark syscall/getpid --resultclass 'mean*'\n"
      "  kbench trend --swprofile 'v6.*' --sut lab-1 --format html > trend.html\n"
      "  kbench trend --swprofile 'nightly-*' --order store --min-segment 3");
  cmd->callback([request] { write_trend(*request, std::cout); });
}

}  // namespace kbench::cli
