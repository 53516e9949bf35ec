#pragma once
// `kbench noise`: how much a row varies BETWEEN sessions of one profile on a
// SUT (the noise that decides every session-level verdict), what the noise
// model learned from the other profiles on that SUT says, and the smallest
// change a comparison with this many sessions detects (the floor); and how
// much whole runs of one kernel differ on that SUT, which decides every
// comparison of two separate `kbench run`s.
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/report_model.h"
#include "store/result_store.h"

namespace kbench::analysis {

struct NoiseOptions {
  std::string profile;
  // Method, FDR, alpha, sign and session mode of the A/A comparison; the level
  // of the floor is its FDR (or alpha). Base and tests are set internally.
  CompareOptions compare;
  double power = 0.8;  // detection probability the noise floor is quoted at
};

// The A/A half-split needs two sessions in each half.
inline constexpr std::size_t kAaMinSessionsPerHalf = 2;

// Where a row's floor comes from.
enum class FloorBasis {
  Unknown,         // 1 session and no noise model: the between-session noise is unknown
  Sessions,        // the profile's own sessions only
  SessionsAndModel,  // own sessions pooled with the noise model of the other profiles
  Model,           // 1 session: the noise model of the other profiles alone
  NotRelative,     // a session mean <= 0: no log scale, no relative floor
};
const char* floor_basis_name(FloorBasis basis);

struct NoiseRow {
  std::string benchmark;
  ResultClass result_class;
  stats::Summary summary;                 // all samples of the profile
  std::size_t sessions = 0;               // sessions with samples of this row
  double between_cv_pct = stats::kNaN;    // sd of log(session means) x 100; NaN with < 2 sessions
  double within_cv_pct = stats::kNaN;     // pooled sd inside sessions / mean x 100
  double between_share = stats::kNaN;     // share of variance between sessions (ANOVA); NaN: not estimable
  stats::NoisePrior model;                // from the other profiles on this SUT (df 0: none)
  double model_cv_pct = stats::kNaN;      // sqrt(model.variance) x 100
  FloorBasis floor_basis = FloorBasis::Unknown;
  double floor_log_variance = stats::kNaN;  // variance of a log session mean the floor assumes
  double floor_prior_df = 0;              // df the model adds to the floor's test
  double floor_pct = stats::kNaN;         // session test, this many sessions a side, per-row level
  double floor_alone_pct = stats::kNaN;   // at level / rows: one real change among all rows under BH
  // The SUT's run-to-run noise of this row, all profiles included, as
  // compare tests separate runs with it: the run model's REML run variance
  // (each kernel a group, runs random), shrunk toward the SUT's other rows
  // and floored as in compare; df the SUT's run df. df 0: no kernel was
  // measured in 2 runs.
  stats::RunNoise run_noise;
  // Every session a run of its own (kbench calibrate's spread sessions): run
  // and session noise are one, run_noise holds their sum with the sessions'
  // df, and floor_runs_pct is floor_pct.
  bool runs_folded = false;
  double run_cv_pct = stats::kNaN;        // sqrt(run_noise.variance) x 100
  double floor_runs_pct = stats::kNaN;    // floor_pct for two separate runs (one a side), with the run term
  std::string note;                       // why there is no floor, in words
  bool aa_base_present = false;           // the first half has data for this row
  Cell aa;                                // second half against first half
};

struct NoiseTable {
  std::string sut;
  std::size_t sessions = 0;  // of the profile on this SUT
  bool aa_done = false;      // each half had >= kAaMinSessionsPerHalf sessions
  std::string split;         // how the profile was halved, or why it was not
  std::vector<NoiseRow> rows;
  int aa_marks = 0;          // rows marked in the A/A comparison: false alarms by construction
  int rows_unknown = 0;      // rows whose between-session noise is unknown
  int rows_runs_unknown = 0; // rows whose run-to-run noise is unknown (no kernel measured in 2 runs)
  int other_profiles = 0;    // profiles besides this one with samples on this SUT
};

struct NoiseReport {
  std::string profile;
  std::vector<NoiseTable> tables;  // one per SUT
  Legend legend;                   // of the A/A comparison
  double floor_alpha = 0.05;       // per-row level of floor_pct
  double floor_alone_alpha = 0.05; // level of floor_alone_pct
  double power = 0.8;
  int floor_rows = 0;              // rows with a floor (the N of floor_alone)
};

// `samples` holds the profile's samples and those of other profiles on the
// same SUTs (their session means are the noise model); other SUTs are ignored.
// `origins` (analysis::session_origins) gives each session's run and kernel;
// without, each profile is one run of its own kernel and the run-to-run noise
// is unknown.
NoiseReport build_noise_report(const std::vector<store::SampleRow>& samples, const NoiseOptions& options,
                               const std::optional<SessionOrigins>& origins = std::nullopt);

// The words printed when a row's between-session noise cannot be known.
std::string unknown_noise_text();

// The words printed when no kernel on the SUT was measured in 2 runs of a row.
std::string unknown_run_noise_text();

}  // namespace kbench::analysis
