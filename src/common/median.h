#pragma once
// The median of a sample: one definition for the agent's benchmarks and
// timing code and for stats::summarize.
#include <algorithm>
#include <vector>

namespace kbench {

// The middle value, or the mean of the two middle values of an even count
// (halved before adding, so two values near DBL_MAX do not overflow).
// The caller's copy is reordered; empty input is the caller's to refuse.
inline double median_of(std::vector<double> values) {
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(mid));
  return lower / 2 + upper / 2;
}

}  // namespace kbench
