#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "stats/stats.h"

namespace kbench::stats {

std::vector<double> benjamini_hochberg(std::span<const double> p_values) {
  std::vector<double> q(p_values.size(), kNaN);
  std::vector<std::size_t> tested;
  for (std::size_t i = 0; i < p_values.size(); ++i) {
    if (!std::isnan(p_values[i])) tested.push_back(i);
  }
  if (tested.empty()) return q;
  // Largest p first, so the running minimum enforces monotone q-values
  // (q of rank i = min over ranks j >= i of p_(j) * m / j), as R's p.adjust.
  std::stable_sort(tested.begin(), tested.end(),
                   [&](std::size_t x, std::size_t y) { return p_values[x] > p_values[y]; });
  const double m = static_cast<double>(tested.size());
  double running = 1.0;
  for (std::size_t k = 0; k < tested.size(); ++k) {
    const double rank = m - static_cast<double>(k);
    running = std::min(running, p_values[tested[k]] * m / rank);
    q[tested[k]] = running;
  }
  return q;
}

}  // namespace kbench::stats
