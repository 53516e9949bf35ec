#pragma once
// The A/A view behind `kbench noise`: one profile split in two halves and
// compared with itself, plus the noise floor of every row.
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "report/model.h"
#include "store/result_store.h"

namespace kbench::analysis {

struct NoiseOptions {
  std::string profile;
  // Method, FDR, alpha, sign and session mode of the A/A comparison and the
  // floor; base and tests are set internally.
  CompareOptions compare;
  double power = 0.8;  // detection probability the noise floor is quoted at
};

struct NoiseRow {
  std::string benchmark;
  ResultClass result_class;
  stats::Summary summary;           // all samples of the profile
  std::size_t sessions = 0;         // sessions with samples of this row
  double between_share = stats::kNaN;  // share of variance between sessions; NaN: not estimable
  bool floor_on_session_means = false; // the floor (and a compare) would use session means
  std::size_t floor_count = 0;      // samples (or sessions) the floor assumes per side
  double floor_cv = stats::kNaN;    // coefficient of variation the floor assumes
  double floor_pct = stats::kNaN;   // at the per-row level
  double floor_alone_pct = stats::kNaN;  // at level / rows: one real change among all rows under BH
  bool aa_base_present = false;     // the first half has data for this row
  report::Cell aa;                  // second half against first half
};

struct NoiseTable {
  std::string sut;
  std::string split;  // how the profile was halved, in words
  std::vector<NoiseRow> rows;
  int aa_marks = 0;   // rows marked in the A/A comparison: false alarms by construction
};

struct NoiseReport {
  std::string profile;
  std::vector<NoiseTable> tables;  // one per SUT
  report::Legend legend;           // of the A/A comparison
  double floor_alpha = 0.05;       // per-row level of floor_pct
  double floor_alone_alpha = 0.05; // level of floor_alone_pct
  double power = 0.8;
  int floor_rows = 0;              // rows with a floor (the N of floor_alone)
};

// Per SUT: with two or more sessions the first half of the sessions (in
// session order) against the second half; with one session the even repeats
// against the odd ones.
NoiseReport build_noise_report(const std::vector<store::SampleRow>& samples, const NoiseOptions& options);

}  // namespace kbench::analysis
