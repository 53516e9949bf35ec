#pragma once
// Descriptive statistics, hypothesis tests and multiple-comparison control.
// Every function agrees with scipy to 1e-9 relative; the reference values are
// in tests/data/ with their provenance.
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace kbench::stats {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Summary {
  std::size_t count = 0;
  double mean = kNaN;
  double median = kNaN;
  double stddev = kNaN;  // sample standard deviation (n - 1)
  double cv = kNaN;      // stddev / |mean|
  double min = kNaN;
  double max = kNaN;
  double ci95_low = kNaN;  // 95% Student-t confidence interval of the mean
  double ci95_high = kNaN;
};

// count 0: all NaN; count 1: stddev, cv and the CI are NaN.
Summary summarize(std::span<const double> values);

// Quantile of Student's t distribution (scipy.stats.t.ppf).
double student_t_quantile(double probability, double df);
// Half-width of the two-sided `confidence` Student-t CI of a mean.
double mean_ci_halfwidth(double stddev, std::size_t count, double confidence = 0.95);

struct TestResult {
  bool valid = false;
  std::string reason;  // why not valid, e.g. "needs at least 2 samples per side"
  double statistic = kNaN;
  double df = kNaN;  // Welch only
  double p_value = kNaN;
};

// Welch's unequal-variance two-sided t-test (scipy.stats.ttest_ind(equal_var=False)).
TestResult welch_t_test(std::span<const double> a, std::span<const double> b);

// Two-sided Mann-Whitney U (scipy.stats.mannwhitneyu, method="auto", as in
// scipy 1.10): the exact null distribution when at least one sample has <= 8
// values and there are no ties, else the normal approximation with tie and
// continuity correction. statistic is U of `a`. Needs >= 1 value per side.
// Deviation from scipy: with more than 2000 values on the larger side the
// normal approximation is used even when the smaller side has <= 8.
TestResult mann_whitney_u(std::span<const double> a, std::span<const double> b);

// True when the 95% Student-t CIs of the two means do not overlap.
bool ci95_disjoint(const Summary& a, const Summary& b);

// Benjamini-Hochberg adjusted p-values (q-values), in input order. NaN inputs
// (untested rows) stay NaN and do not count as tests.
std::vector<double> benjamini_hochberg(std::span<const double> p_values);

// 95% CI of the relative change (mean_b / mean_a - 1), in percent.
struct ChangeInterval {
  bool valid = false;
  double low = kNaN;
  double high = kNaN;
};
ChangeInterval relative_change_ci(const Summary& a, const Summary& b, double confidence = 0.95);

// --- sessions: how much of the noise comes from the boot -------------------

// One-way random-effects ANOVA over samples grouped by session (method of
// moments; unbalanced groups use n0 = (N - sum n_i^2 / N) / (k - 1)).
// Empty sessions are ignored.
struct SessionVariance {
  bool valid = false;
  std::string reason;          // why not valid
  std::size_t sessions = 0;    // non-empty sessions
  std::size_t samples = 0;
  double ms_between = kNaN;    // mean square between sessions, df k - 1
  double ms_within = kNaN;     // mean square within sessions, df N - k
  double n0 = kNaN;            // effective session size
  double between = kNaN;       // variance component between sessions, max(0, (MSB - MSW) / n0)
  double within = kNaN;        // variance component within sessions (= MSW)
  double between_share = kNaN; // between / (between + within); NaN when both are 0
};
SessionVariance session_variance(const std::vector<std::vector<double>>& sessions);

// True when there are >= 2 sessions and the between-session component is
// positive and at least as large as the within-session one: then the sessions,
// not the repeats, are the independent observations.
bool session_noisy(const SessionVariance& decomposition);

// Mean of every non-empty session, in order (the samples to test on when a
// profile is session-noisy).
std::vector<double> session_means(const std::vector<std::vector<double>>& sessions);

// --- noise floor --------------------------------------------------------------

// Smallest relative change (in percent of the base mean) that Welch's test at
// two-sided level `alpha` detects with probability `power`, for the given
// sample counts and coefficients of variation (fractions, e.g. 0.01):
//   (t_{1-alpha/2, df} + t_{power, df}) * sqrt(cv_a^2/n_a + cv_b^2/n_b) * 100
// with the Welch-Satterthwaite df of those variances. NaN when a side has < 2
// samples or a cv is negative/NaN.
double noise_floor_percent(std::size_t count_a, double cv_a, std::size_t count_b, double cv_b,
                           double alpha = 0.05, double power = 0.8);
// Same with n samples and the same cv on both sides.
double noise_floor_percent(std::size_t count_per_side, double cv, double alpha = 0.05,
                           double power = 0.8);

// --- summaries ----------------------------------------------------------------

// Geometric mean (scipy.stats.gmean) of the non-NaN values, e.g. per-row
// ratios mean_T / mean_B. NaN when there is no value or any value is <= 0.
double geometric_mean(std::span<const double> values);

}  // namespace kbench::stats
