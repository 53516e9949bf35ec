#include "app/trend.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <map>

#include "analysis/runs.h"
#include "analysis/trend.h"
#include "app/option_values.h"
#include "app/store_access.h"
#include "common/errors.h"
#include "common/spoken_list.h"
#include "report/format_table.h"

namespace kbench::app {

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
    const std::string known = comma_list(listings, &store::SwprofileListing::name);
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

TrendRequest parse_trend_request(const TrendArguments& arguments) {
  if (arguments.swprofile_glob.empty()) throw InputError("trend: --swprofile GLOB is required");
  TrendRequest request;
  request.swprofile_glob = arguments.swprofile_glob;
  request.swprofile_pattern = parse_glob("--swprofile", arguments.swprofile_glob);
  request.order = analysis::parse_trend_order(arguments.order);
  request.format = &report::find_format(arguments.format, report::View::Trend);
  if (arguments.sign != "better" && arguments.sign != "raw")
    throw InputError("--sign " + arguments.sign + ": expected better or raw");
  analysis::TrendOptions& options = request.options;
  options.sign = arguments.sign == "raw" ? analysis::SignConvention::Raw : analysis::SignConvention::Better;
  options.min_change_pct = parse_min_change(arguments.min_change);
  options.min_segment = static_cast<std::size_t>(parse_integer("--min-segment", arguments.min_segment, 1, 1000));
  request.filter = arguments.filter;
  request.store_url = arguments.store_url;
  return request;
}

void write_trend(const TrendRequest& request, std::ostream& out) {
  analysis::TrendOptions options = request.options;
  const OpenedStore opened = open_existing_store(request.store_url);
  auto& store = *opened.store;
  const auto profiles = analysis::order_swprofiles(
      matching_in_store_order(store, opened.url, request.swprofile_pattern), request.order);
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
  request.format->trend(trend, "kbench trend " + request.swprofile_glob, out);
}

}  // namespace kbench::app
