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

// Two-sided Mann-Whitney U (scipy.stats.mannwhitneyu, method="auto"): exact
// when both samples are small (< 8) and there are no ties, else the normal
// approximation with tie and continuity correction. statistic is U of `a`.
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

}  // namespace kbench::stats
