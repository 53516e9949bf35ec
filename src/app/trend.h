#pragma once
// What `kbench trend` prints, for the command line and for `kbench serve`
// (format "html").
#include <iosfwd>
#include <string>

#include "analysis/trend.h"
#include "report/format_table.h"
#include "store/result_store.h"

namespace kbench::app {

// Every option of `kbench trend`, as text: parse_trend_request checks them,
// so the command line and serve's query parameters are refused with the
// same words.
struct TrendArguments {
  std::string swprofile_glob;     // --swprofile, required
  store::SampleQuery filter;      // --sut, --benchmark, --resultclass (swprofiles ignored)
  std::string order = "version";  // version | store
  std::string format = "text";    // text | html
  std::string sign = "better";    // better | raw
  std::string min_change = "2";   // percent, as compare's --min-change
  std::string min_segment = "1";  // swprofiles per segment
  std::string store_url;          // "" : the default store
};

// A trend to draw, every option checked.
struct TrendRequest {
  std::string swprofile_glob;  // as given: the report's title and messages name it so
  std::string swprofile_pattern;  // the glob as fnmatch reads it (parse_glob)
  analysis::TrendOrder order = analysis::TrendOrder::Version;
  const report::Format* format = nullptr;  // one of View::Trend
  analysis::TrendOptions options;  // swprofiles: filled from the store
  store::SampleQuery filter;
  std::string store_url;
};

// Throws InputError (one line) for a missing glob or a bad option.
TrendRequest parse_trend_request(const TrendArguments& arguments);

// The trend of every selected row across the swprofiles matching the glob,
// with change points and the step table. Throws InputError (no swprofile
// matches, no rows) before writing anything.
void write_trend(const TrendRequest& request, std::ostream& out);

}  // namespace kbench::app
