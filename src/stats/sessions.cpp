#include <cmath>

#include "stats/distributions.h"
#include "stats/stats.h"

namespace kbench::stats {

SessionVariance session_variance(const std::vector<std::vector<double>>& sessions) {
  SessionVariance r;
  std::vector<const std::vector<double>*> groups;
  for (const auto& s : sessions) {
    if (!s.empty()) groups.push_back(&s);
  }
  r.sessions = groups.size();
  for (const auto* g : groups) r.samples += g->size();
  if (r.sessions < 2) {
    r.reason = "needs at least 2 sessions";
    return r;
  }
  if (r.samples <= r.sessions) {
    r.reason = "needs a session with at least 2 samples";
    return r;
  }
  const double k = static_cast<double>(r.sessions);
  const double n = static_cast<double>(r.samples);

  std::vector<double> pooled;
  pooled.reserve(r.samples);
  for (const auto* g : groups) pooled.insert(pooled.end(), g->begin(), g->end());
  const double grand_mean = detail::moments(pooled.data(), pooled.size()).mean;

  double ss_between = 0, ss_within = 0, sum_sizes_squared = 0;
  for (const auto* g : groups) {
    const auto m = detail::moments(g->data(), g->size());
    const double size = static_cast<double>(g->size());
    ss_between += size * (m.mean - grand_mean) * (m.mean - grand_mean);
    ss_within += m.sum_squared_deviations;
    sum_sizes_squared += size * size;
  }
  r.ms_between = ss_between / (k - 1);
  r.ms_within = ss_within / (n - k);
  r.n0 = (n - sum_sizes_squared / n) / (k - 1);
  // The moment estimate can be negative (sessions agree better than repeats
  // would predict); a variance component cannot, so it is truncated at 0.
  r.between = std::max(0.0, (r.ms_between - r.ms_within) / r.n0);
  r.within = r.ms_within;
  const double total = r.between + r.within;
  r.between_share = total > 0 ? r.between / total : kNaN;
  r.valid = true;
  return r;
}

bool session_noisy(const SessionVariance& d) {
  return d.valid && d.sessions >= 2 && d.between > 0 && d.between >= d.within;
}

std::vector<double> session_means(const std::vector<std::vector<double>>& sessions) {
  std::vector<double> means;
  for (const auto& s : sessions) {
    if (!s.empty()) means.push_back(detail::moments(s.data(), s.size()).mean);
  }
  return means;
}

}  // namespace kbench::stats
