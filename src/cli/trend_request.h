#pragma once
// What `kbench trend` prints, callable by `kbench serve` (format "html").
#include <iosfwd>
#include <string>

#include "store/result_store.h"

namespace kbench::cli {

// Every option of `kbench trend`, as text: write_trend parses and checks
// them, so the command line and serve's query parameters are refused with the
// same words.
struct TrendRequest {
  std::string swprofile_glob;     // --swprofile, required
  store::SampleQuery filter;      // --sut, --benchmark, --resultclass (swprofiles ignored)
  std::string order = "version";  // version | store
  std::string format = "text";    // text | html
  std::string sign = "better";    // better | raw
  std::string min_change = "2";   // percent, as compare's --min-change
  std::string min_segment = "1";  // swprofiles per segment
  std::string store_url;          // "" : the default store
};

// The trend of every selected row across the swprofiles matching the glob,
// with change points and the step table. Throws InputError (one line: no
// swprofile matches, bad --order, no rows) before writing anything.
void write_trend(const TrendRequest& request, std::ostream& out);

}  // namespace kbench::cli
