#pragma once
// Hand-made pieces of the report model (src/analysis/report_model.h) that the
// renderer tests build their tables from.
#include <cmath>
#include <cstddef>

#include "report/model.h"

namespace kbench::report::fixtures {

// A side's summary with the given mean: sd and cv 1%, min/max +-2%, CI +-1%.
inline stats::Summary summary_with_mean(double mean, std::size_t count = 6) {
  stats::Summary s;
  s.count = count;
  s.mean = s.median = mean;
  s.stddev = std::fabs(mean) * 0.01;
  s.cv = 0.01;
  s.min = mean * 0.98;
  s.max = mean * 1.02;
  s.ci95_low = mean * 0.99;
  s.ci95_high = mean * 1.01;
  return s;
}

// A tested cell of `sessions`+`sessions` sessions whose raw change is
// `raw_pct`, with a CI of +-1 point around it.
inline analysis::Cell tested_cell(double base_mean, double raw_pct, analysis::Verdict verdict, std::size_t sessions,
                                  double p_value, double q_value, std::size_t test_count = 6) {
  analysis::Cell c;
  c.present = true;
  c.test = summary_with_mean(base_mean * (1 + raw_pct / 100), test_count);
  c.change_pct = raw_pct;
  c.change_ci = {true, raw_pct - 1, raw_pct + 1};
  c.p_value = p_value;
  c.q_value = q_value;
  c.verdict = verdict;
  c.base_sessions = sessions;
  c.test_sessions = sessions;
  return c;
}

}  // namespace kbench::report::fixtures
