#pragma once
// Bisection under noise: is a candidate commit good or bad? Pure statistics
// (docs/bisect.md). A commit is classified per row (one benchmark and result
// class) against the measured distributions of the good and bad endpoints,
// one value per session: the session's mean, on a log scale as compare's
// session test uses it (changes are relative; levels differ by row).
//
// The candidate's position is how far its mean lies from the midpoint of the
// endpoints, oriented so that positive means toward bad:
//   d  = s * (mean log C - (mean log G + mean log B) / 2),  s = sign(mean log B - mean log G)
//   se = sqrt(v_C / n_C + (v_G / n_G + v_B / n_B) / 4)
// with Welch-Satterthwaite df over the three variance terms. The row is
// settled bad when the two-sided (1 - alpha') interval of d lies above 0,
// good when below, unsettled otherwise. alpha' = alpha / max_looks: bisect
// looks again after every session it adds (at most max_looks times per
// commit), and Bonferroni over the looks keeps the chance that any look
// settles on the wrong side below alpha.
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace kbench::analysis {

enum class BisectSide { Good, Bad, Unsettled };

// "good", "bad", "unsettled".
std::string to_string(BisectSide side);

struct RowPosition {
  bool valid = false;
  std::string reason;  // why not valid (too few sessions, a value <= 0, endpoints equal)
  std::size_t good_sessions = 0;
  std::size_t bad_sessions = 0;
  std::size_t candidate_sessions = 0;
  double position = std::numeric_limits<double>::quiet_NaN();  // d, log scale, > 0: toward bad
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  // standard_error squared, split: the candidate's part and the endpoints'.
  double candidate_variance = std::numeric_limits<double>::quiet_NaN();
  double endpoints_variance = std::numeric_limits<double>::quiet_NaN();
  double df = std::numeric_limits<double>::quiet_NaN();  // Welch-Satterthwaite (infinite when se is 0)
  double level = std::numeric_limits<double>::quiet_NaN();  // alpha' = alpha / max_looks
  double low = std::numeric_limits<double>::quiet_NaN();    // the (1 - alpha') interval of d
  double high = std::numeric_limits<double>::quiet_NaN();
  // For the log: where the candidate lies on the way from good (0) to bad
  // (1), 0.5 + d / |mean log B - mean log G|, and the interval of d on that
  // scale (the endpoints' gap taken as known: the decision uses d alone).
  double fraction = std::numeric_limits<double>::quiet_NaN();
  double fraction_low = std::numeric_limits<double>::quiet_NaN();
  double fraction_high = std::numeric_limits<double>::quiet_NaN();
  BisectSide side = BisectSide::Unsettled;
};

// Needs >= 2 session means on each side, every one > 0 and finite, and
// endpoints whose means differ; alpha in (0, 1), max_looks >= 1. Otherwise
// valid is false, the side unsettled and the reason says why.
RowPosition classify_row(std::span<const double> good_session_means, std::span<const double> bad_session_means,
                         std::span<const double> candidate_session_means, double alpha, int max_looks);

// The endpoints check: does bad differ from good in the regression direction?
// Welch's interval of mean log B - mean log G at two-sided (1 - alpha).
struct EndpointCheck {
  bool valid = false;
  std::string reason;
  double log_change = std::numeric_limits<double>::quiet_NaN();  // mean log B - mean log G
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  double df = std::numeric_limits<double>::quiet_NaN();
  double low = std::numeric_limits<double>::quiet_NaN();  // interval of log_change
  double high = std::numeric_limits<double>::quiet_NaN();
  double change_pct = std::numeric_limits<double>::quiet_NaN();  // expm1(log_change) * 100
  bool differs = false;  // the interval excludes 0 on the regression side
};
// `lower_is_better`: a regression is an increase (ns, seconds); otherwise a
// decrease (ops/sec). Needs >= 2 sessions a side, values > 0.
EndpointCheck check_endpoints(std::span<const double> good_session_means, std::span<const double> bad_session_means,
                              bool lower_is_better, double alpha);

// Several rows: a commit is settled when every row is; bad when every row
// says bad, good when every row says good. Rows settled on different sides
// make it a skip (the commit is neither the good nor the bad kernel).
enum class BisectDecision { Good, Bad, Unsettled, Skip };
std::string to_string(BisectDecision decision);

struct CommitClassification {
  BisectDecision decision = BisectDecision::Unsettled;
  std::string why;  // one line for the log
};
// `names[i]` labels rows[i] in the why line. An invalid row makes the commit
// a skip (it cannot be classified however many sessions are added).
CommitClassification classify_commit(const std::vector<RowPosition>& rows, const std::vector<std::string>& names);

// What an unsettled commit's next session should be. More sessions of the
// candidate cannot narrow its interval below what the endpoints' few
// sessions leave (their variance, and their few degrees of freedom), so when
// the endpoints' part of an unsettled row's variance is at least the
// candidate's, both endpoints get one more session instead; they then serve
// every later step too.
enum class NextSession { Candidate, Endpoints };
NextSession next_session(const std::vector<RowPosition>& rows);

}  // namespace kbench::analysis
