#pragma once
// Boost.Math distributions with a policy that returns NaN / infinity instead
// of throwing: statistics on odd data (zero variance, df = 1) must degrade to
// "not testable", never abort a report.
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

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

}  // namespace kbench::stats::detail
