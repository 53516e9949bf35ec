#pragma once
// kbench merge SRC DST: copies sessions between stores of any kind through
// the ResultStore interface only (docs/resultstore.md, "Merging stores").
#include <cstdint>
#include <cstddef>
#include <string>
#include <vector>

namespace kbench::app {

struct MergeRequest {
  std::string source;
  std::string destination;
  std::vector<std::string> swprofile_globs;  // checked globs; empty: all
  std::vector<std::string> sut_globs;        // checked globs; empty: all
  bool dry_run = false;
};

// What was (with dry_run: would be) copied.
struct MergeSummary {
  std::size_t copied = 0;
  int unfinished = 0;  // of those copied, merged as they are
  int present = 0;     // already in DST with the same content
  std::int64_t samples = 0;
  // "  SUT SWPROFILE session N is session M in DST (uid U)", one a session
  // whose number DST already had.
  std::vector<std::string> renumbered;
  double seconds = 0;
};

// First every check, then every write: a conflict (a session of one uid with
// other content, a result class better the other way) leaves DST as it was.
// Throws InputError for those and for filters matching no session.
MergeSummary merge_stores(const MergeRequest& request);

}  // namespace kbench::app
