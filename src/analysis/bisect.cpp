#include "analysis/bisect.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "stats/stats.h"

namespace kbench::analysis {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct LogSide {
  double mean = 0;
  double variance = 0;  // sample variance (n - 1) of the logs
  double count = 0;
};

// Mean and variance of the logs, or nothing when a value is not > 0.
std::optional<LogSide> log_side(std::span<const double> values) {
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
    logs.push_back(std::log(v));
  }
  const stats::Summary summary = stats::summarize(logs);
  return LogSide{summary.mean, summary.stddev * summary.stddev, static_cast<double>(logs.size())};
}

// Welch-Satterthwaite df of a sum of independent variance terms a_i with
// df_i each: (sum a_i)^2 / sum(a_i^2 / df_i). Terms that are 0 add nothing.
double satterthwaite_df(std::initializer_list<std::pair<double, double>> terms) {
  double total = 0, denominator = 0;
  for (const auto& [term, df] : terms) {
    total += term;
    denominator += term * term / df;
  }
  return denominator > 0 ? total * total / denominator : kInfinity;
}

// Two-sided (1 - level) interval of an estimate with this standard error and df.
std::pair<double, double> interval(double estimate, double standard_error, double df, double level) {
  if (standard_error == 0) return {estimate, estimate};
  const double t = stats::student_t_quantile(1 - level / 2, df);
  return {estimate - t * standard_error, estimate + t * standard_error};
}

}  // namespace

std::string to_string(BisectSide side) {
  switch (side) {
    case BisectSide::Good: return "good";
    case BisectSide::Bad: return "bad";
    case BisectSide::Unsettled: break;
  }
  return "unsettled";
}

std::string to_string(BisectDecision decision) {
  switch (decision) {
    case BisectDecision::Good: return "good";
    case BisectDecision::Bad: return "bad";
    case BisectDecision::Skip: return "skip";
    case BisectDecision::Unsettled: break;
  }
  return "unsettled";
}

RowPosition classify_row(std::span<const double> good, std::span<const double> bad, std::span<const double> candidate,
                         double alpha, int max_looks) {
  RowPosition r;
  r.good_sessions = good.size();
  r.bad_sessions = bad.size();
  r.candidate_sessions = candidate.size();
  if (!(alpha > 0 && alpha < 1) || max_looks < 1) {
    r.reason = "alpha must lie in (0, 1) and max looks be at least 1";
    return r;
  }
  r.level = alpha / max_looks;
  if (good.size() < 2 || bad.size() < 2 || candidate.size() < 2) {
    r.reason = "needs at least 2 sessions of good, bad and the candidate";
    return r;
  }
  const auto g = log_side(good);
  const auto b = log_side(bad);
  const auto c = log_side(candidate);
  if (!g || !b || !c) {
    r.reason = "a session mean is not > 0 (no log scale)";
    return r;
  }
  const double gap = b->mean - g->mean;
  if (gap == 0) {
    r.reason = "the endpoints' means are equal: no direction from good to bad";
    return r;
  }
  const double orientation = gap > 0 ? 1.0 : -1.0;
  r.position = orientation * (c->mean - (g->mean + b->mean) / 2);
  const double term_c = c->variance / c->count;
  const double term_g = g->variance / g->count / 4;
  const double term_b = b->variance / b->count / 4;
  r.standard_error = std::sqrt(term_c + term_g + term_b);
  r.candidate_variance = term_c;
  r.endpoints_variance = term_g + term_b;
  r.df = satterthwaite_df({{term_c, c->count - 1}, {term_g, g->count - 1}, {term_b, b->count - 1}});
  std::tie(r.low, r.high) = interval(r.position, r.standard_error, r.df, r.level);
  const double width = std::fabs(gap);
  r.fraction = 0.5 + r.position / width;
  r.fraction_low = 0.5 + r.low / width;
  r.fraction_high = 0.5 + r.high / width;
  if (r.low > 0) {
    r.side = BisectSide::Bad;
  } else if (r.high < 0) {
    r.side = BisectSide::Good;
  }
  r.valid = true;
  return r;
}

EndpointCheck check_endpoints(std::span<const double> good, std::span<const double> bad, bool lower_is_better,
                              double alpha) {
  EndpointCheck r;
  if (!(alpha > 0 && alpha < 1)) {
    r.reason = "alpha must lie in (0, 1)";
    return r;
  }
  if (good.size() < 2 || bad.size() < 2) {
    r.reason = "needs at least 2 sessions of good and of bad";
    return r;
  }
  const auto g = log_side(good);
  const auto b = log_side(bad);
  if (!g || !b) {
    r.reason = "a session mean is not > 0 (no log scale)";
    return r;
  }
  r.log_change = b->mean - g->mean;
  const double term_g = g->variance / g->count;
  const double term_b = b->variance / b->count;
  r.standard_error = std::sqrt(term_g + term_b);
  r.df = satterthwaite_df({{term_g, g->count - 1}, {term_b, b->count - 1}});
  std::tie(r.low, r.high) = interval(r.log_change, r.standard_error, r.df, alpha);
  r.change_pct = std::expm1(r.log_change) * 100;
  r.differs = lower_is_better ? r.low > 0 : r.high < 0;
  r.valid = true;
  return r;
}

NextSession next_session(const std::vector<RowPosition>& rows) {
  for (const auto& row : rows) {
    if (row.valid && row.side == BisectSide::Unsettled && row.endpoints_variance >= row.candidate_variance) {
      return NextSession::Endpoints;
    }
  }
  return NextSession::Candidate;
}

CommitClassification classify_commit(const std::vector<RowPosition>& rows, const std::vector<std::string>& names) {
  CommitClassification result;
  const auto name = [&](std::size_t i) { return i < names.size() ? names[i] : fmt::format("row {}", i + 1); };
  if (rows.empty()) {
    result.decision = BisectDecision::Skip;
    result.why = "no rows to classify";
    return result;
  }
  std::vector<std::string> good, bad, unsettled;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].valid) {
      result.decision = BisectDecision::Skip;
      result.why = fmt::format("{}: {}", name(i), rows[i].reason);
      return result;
    }
    switch (rows[i].side) {
      case BisectSide::Good: good.push_back(name(i)); break;
      case BisectSide::Bad: bad.push_back(name(i)); break;
      case BisectSide::Unsettled: unsettled.push_back(name(i)); break;
    }
  }
  const auto join = [](const std::vector<std::string>& list) { return fmt::format("{}", fmt::join(list, ", ")); };
  if (!good.empty() && !bad.empty()) {
    result.decision = BisectDecision::Skip;
    result.why = fmt::format("rows settle on different sides: good {}; bad {}", join(good), join(bad));
    return result;
  }
  if (!unsettled.empty()) {
    result.decision = BisectDecision::Unsettled;
    result.why = fmt::format("unsettled: {}", join(unsettled));
    return result;
  }
  if (!bad.empty()) {
    result.decision = BisectDecision::Bad;
    result.why = rows.size() == 1 ? "interval above 0 (toward bad)" : "every row's interval above 0 (toward bad)";
  } else {
    result.decision = BisectDecision::Good;
    result.why = rows.size() == 1 ? "interval below 0 (toward good)" : "every row's interval below 0 (toward good)";
  }
  return result;
}

}  // namespace kbench::analysis
