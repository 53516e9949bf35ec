#pragma once
// Boost.Math distributions with a policy that returns NaN / infinity instead
// of throwing: statistics on odd data (zero variance, df = 1) must degrade to
// "not testable", never abort a report.
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <span>
#include <vector>

namespace kbench::stats::detail {

using QuietPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>>;

using StudentT = boost::math::students_t_distribution<double, QuietPolicy>;
using Normal = boost::math::normal_distribution<double, QuietPolicy>;

// P(T > t) for Student's t with `df` degrees of freedom, df may be infinite.
double student_t_upper_tail(double t, double df);
// P(Z > z) for the standard normal distribution.
double normal_upper_tail(double z);

// Welch-Satterthwaite df of a variance made of two independent parts, each
// with its own df (the session part and the run part of a change).
double combined_df(double part_a, double df_a, double part_b, double df_b);

// Mean and sum of squared deviations with the corrected two-pass algorithm
// (the second pass removes the rounding error of the first pass's mean).
struct Moments {
  double mean;
  double sum_squared_deviations;
};
Moments moments(const double* values, std::size_t count);

// The power of two to divide values by before summing or squaring them: 0
// while the largest finite |value| lies within [2^-256, 2^256], else the
// exponent that brings it into [0.5, 1). Beyond that range a sum of values
// near 1.7e308 overflows and squared deviations of values near 1e300
// overflow, or of values near 1e-300 underflow to 0 (a variance of 0 is "no
// noise at all"). Scaling by a power of two is exact, and within the range
// nothing is scaled, so ordinary data gives the very same bits as before.
int range_exponent(std::span<const double> a, std::span<const double> b = {});

// `values` divided by 2^exponent.
std::vector<double> scaled(std::span<const double> values, int exponent);

}  // namespace kbench::stats::detail
