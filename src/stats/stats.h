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

// The confidence interval of the mean of a positive quantity (a per-swprofile
// point of `kbench trend`: over its session means) that never reaches below
// zero: the modified Cox interval for the mean of a log-normal sample
// (Olsson 2005, J. Statistics Education 13(1)), computed on the logs and
// back-transformed:
//   exp(ybar + s^2/2 -+ t(0.5 + c/2, n - 1) * sqrt(s^2/n + s^4/(2(n - 1))))
// with ybar, s^2 the mean and variance (n - 1) of log v. A heavy right tail
// (one preempted session among ten) makes the plain t-interval mean -+ t s/sqrt(n)
// go below zero; this one stays positive and, unlike exp(ybar -+ t s/sqrt(n))
// (an interval of the geometric mean), is centred on the arithmetic mean the
// point prints. When a value is <= 0 or not finite there is no log scale and
// the plain t-interval is returned (log_scale false). NaN bounds with n < 2.
struct MeanInterval {
  double low = kNaN;
  double high = kNaN;
  bool log_scale = false;
};
MeanInterval positive_mean_ci(std::span<const double> values, double confidence = 0.95);

// --- the session-level test (docs/statistics.md, "Sessions are the replicates")
// Repeats inside one session agree far better than sessions minutes apart do,
// so kbench tests one value per session: the natural log of its mean (changes
// are relative; logs make the noise of profiles at different levels pool).

// What the store already knows about a row's between-session noise on one SUT:
// the pooled variance of log session means over other profiles. It is the
// prior of an empirical-Bayes moderated t-test (Smyth 2004, limma's eBayes
// with a row-specific prior): with few sessions the test borrows its df.
struct NoisePrior {
  double variance = kNaN;  // of log(session mean)
  double df = 0;           // sum over profiles of (sessions - 1); 0: no prior
  std::size_t profiles = 0;
};
// Pools the sample variance of log(session means) over profiles, each weighted
// by its sessions - 1. Profiles with < 2 sessions or a value <= 0 add nothing.
NoisePrior pool_log_session_variance(const std::vector<std::vector<double>>& session_means_per_profile);

// --- runs: whole runs of one kernel differ more than their sessions ---------
// Sessions of one `kbench run` are minutes apart; two runs may be hours apart,
// and on a shared host the machine itself drifts between them (docs/
// statistics.md, "Runs"). A run's effect u_r ~ N(0, sigma_r^2) falls on every
// session of the run, so sessions within a run cannot estimate it: only runs
// of one kernel measured more than once can.
struct RunNoise {
  double variance = kNaN;  // V: the run variance of log session means (the run model's, src/stats/run_model.h)
  double df = 0;           // its df; 0: unknown
  std::size_t runs = 0;    // runs that taught it
};

// The run term of a comparison whose sides were measured in different runs:
// V * (1/base_runs + 1/test_runs) joins the variance of the change, and the
// df follow Welch-Satterthwaite with the session part's df. The session noise
// is counted twice then (in V and in the session part): conservative, by at
// most a factor 2 in variance where runs do not differ at all.
struct RunTerm {
  RunNoise noise;
  std::size_t base_runs = 1;
  std::size_t test_runs = 1;
};

struct SessionTest {
  bool valid = false;
  std::string reason;          // why not valid, in words a report can print
  std::size_t base_sessions = 0;
  std::size_t test_sessions = 0;
  double log_change = kNaN;    // mean log(test) - mean log(base)
  double variance = kNaN;      // moderated variance of one log session mean
  double df = kNaN;            // prior df + base_sessions + test_sessions - 2
  double prior_df = 0;         // the prior's share of df (0: none used)
  double run_variance = 0;     // V * (1/base_runs + 1/test_runs) in the variance of the change
  double run_df = 0;           // df of that term (0: none)
  double test_df = kNaN;       // df of t and the CI: df, or Welch-Satterthwaite with the run term
  double standard_error = kNaN;
  double statistic = kNaN;
  double p_value = kNaN;       // two-sided
  double ci_low_pct = kNaN;    // CI of exp(log_change) - 1, percent
  double ci_high_pct = kNaN;
};
// Moderated two-sample t-test on the logs of session means:
//   s2 = (d0*s0^2 + d*sp^2) / (d0 + d),  d = n_b + n_t - 2,  df = d0 + d,
//   t = (mean log test - mean log base) / sqrt(s2 * (1/n_b + 1/n_t)).
// With a run term R = V (1/r_b + 1/r_t) the denominator is
// sqrt(s2 (1/n_b + 1/n_t) + R), with Welch-Satterthwaite df.
// With d0 = 0 it is Student's pooled t-test (scipy.stats.ttest_ind). Needs
// every value > 0 and df >= 1; a side with one session is fine when the prior
// (or the other side) supplies df. `confidence` sets the CI.
SessionTest session_test(std::span<const double> base_session_means, std::span<const double> test_session_means,
                         const NoisePrior& prior, double confidence = 0.95, const RunTerm* run = nullptr);

// How many more sessions per side would decide a row, if the change stayed
// what it is now: the smallest k <= limit with which the CI at `confidence`
// excludes 0 with |change| >= min_change_pct (a mark), or the CI at
// `equivalence_confidence` lies inside +-min_change_pct (unchanged); NaN
// there: `confidence` for both. 0: already decided; limit + 1: not within limit.
int sessions_to_decide(const SessionTest& test, double min_change_pct, double confidence = 0.95, int limit = 50,
                       double equivalence_confidence = kNaN);

// The smallest relative change (percent) the session test detects at two-sided
// level alpha with probability `power`, with n sessions a side and the given
// noise (variance of a log session mean, df of the prior besides the sessions).
double session_floor_percent(std::size_t sessions_per_side, double log_variance, double prior_df,
                             double alpha = 0.05, double power = 0.8);
// The same floor for a comparison of two separate runs (one run a side), as
// session_test tests it: the run term 2V joins the variance of the change,
//   A = 2 v / n,  R = 2 V,  df = (A + R)^2 / (A^2 / df_s + R^2 / df_V),
//   floor = expm1((t(1 - alpha/2, df) + t(power, df)) * sqrt(A + R)) * 100.
// NaN when df_s < 1 or the run noise is unknown (df 0): such a comparison is
// not tested. V = 0 adds no term, as in session_test.
double session_floor_runs_percent(std::size_t sessions_per_side, double log_variance, double prior_df,
                                  const RunNoise& run, double alpha = 0.05, double power = 0.8);

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
