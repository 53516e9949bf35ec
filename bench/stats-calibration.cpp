// Simulated comparisons with known truth: how often kbench's verdicts are
// wrong (false marks in A/A reports) and how often they are right (power),
// for the methods it offers. Fixed seeds: every run prints the same figures.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analysis/compare.h"
#include "stats/stats.h"

namespace st = kbench::stats;

namespace {

constexpr double kFdr = 0.05;
constexpr double kAlpha = 0.05;

std::mt19937_64 rng(20261129);

std::vector<double> draw(std::size_t n, double mean, double sd) {
  std::normal_distribution<double> dist(mean, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }

// Wilson 95% interval of a proportion, so each rate is printed with its
// simulation uncertainty.
void print_rate(const char* label, std::size_t hits, std::size_t trials) {
  const double n = static_cast<double>(trials), p = hits / n, z = 1.959963984540054;
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  std::printf("  %-58s %6.2f%%  [%5.2f, %5.2f]  (%zu/%zu)\n", label, 100 * p,
              100 * (centre - half), 100 * (centre + half), hits, trials);
}

struct Row {
  std::vector<double> a, b;
};

struct Verdicts {
  bool welch_bh = false, welch_raw = false, ci_overlap = false, mwu_bh = false;
};

// Marks of one report; `watch` is the row whose own verdicts are returned in
// `watched` (for power), or rows.size() for none.
Verdicts judge(const std::vector<Row>& rows, std::size_t watch, Verdicts* watched) {
  std::vector<double> welch_p(rows.size()), mwu_p(rows.size());
  Verdicts any;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    welch_p[i] = st::welch_t_test(rows[i].a, rows[i].b).p_value;
    mwu_p[i] = st::mann_whitney_u(rows[i].a, rows[i].b).p_value;
    const bool raw = welch_p[i] < kAlpha;
    const bool overlap = st::ci95_disjoint(st::summarize(rows[i].a), st::summarize(rows[i].b));
    any.welch_raw |= raw;
    any.ci_overlap |= overlap;
    if (i == watch) {
      watched->welch_raw = raw;
      watched->ci_overlap = overlap;
    }
  }
  const auto welch_q = st::benjamini_hochberg(welch_p);
  const auto mwu_q = st::benjamini_hochberg(mwu_p);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    any.welch_bh |= welch_q[i] <= kFdr;
    any.mwu_bh |= mwu_q[i] <= kFdr;
  }
  if (watch < rows.size()) {
    watched->welch_bh = welch_q[watch] <= kFdr;
    watched->mwu_bh = mwu_q[watch] <= kFdr;
  }
  return any;
}

void false_marks_in_aa_reports() {
  constexpr std::size_t kReports = 1000, kRows = 150, kSamples = 10;
  std::printf("(a) A/A reports: %zu reports x %zu rows, %zu samples a side, normal noise,\n"
              "    cv per row uniform in [1%%, 3%%]; share of reports with ANY mark\n",
              kReports, kRows, kSamples);
  std::size_t welch_bh = 0, welch_raw = 0, overlap = 0, mwu_bh = 0, rows_raw = 0, rows_overlap = 0;
  std::vector<Row> rows(kRows);
  for (std::size_t r = 0; r < kReports; ++r) {
    for (auto& row : rows) {
      const double mean = uniform(1, 1e6), sd = mean * uniform(0.01, 0.03);
      row.a = draw(kSamples, mean, sd);
      row.b = draw(kSamples, mean, sd);
    }
    const auto any = judge(rows, kRows, nullptr);
    welch_bh += any.welch_bh;
    welch_raw += any.welch_raw;
    overlap += any.ci_overlap;
    mwu_bh += any.mwu_bh;
    for (const auto& row : rows) {
      rows_raw += st::welch_t_test(row.a, row.b).p_value < kAlpha;
      rows_overlap += st::ci95_disjoint(st::summarize(row.a), st::summarize(row.b));
    }
  }
  print_rate("welch + BH q=0.05 (kbench default; goal <= 5%)", welch_bh, kReports);
  print_rate("mwu + BH q=0.05", mwu_bh, kReports);
  print_rate("ci-overlap, no correction (seed report's rule)", overlap, kReports);
  print_rate("welch p<0.05, no correction", welch_raw, kReports);
  std::printf("  false marks per report: welch uncorrected %.2f, ci-overlap %.2f (of %zu rows)\n",
              double(rows_raw) / kReports, double(rows_overlap) / kReports, kRows);
}

// Power for one changed row among `rows_total` rows, `changed_rows` of which
// carry the change (the rest are A/A).
void power(const char* label, std::size_t rows_total, std::size_t changed_rows, std::size_t samples,
           double change, double cv, std::size_t trials) {
  std::size_t welch_bh = 0, welch_raw = 0, overlap = 0, mwu_bh = 0;
  std::vector<Row> rows(rows_total);
  for (std::size_t t = 0; t < trials; ++t) {
    for (std::size_t i = 0; i < rows_total; ++i) {
      const double mean = 1000.0, sd = mean * cv;
      rows[i].a = draw(samples, mean, sd);
      rows[i].b = draw(samples, i < changed_rows ? mean * (1 + change) : mean, sd);
    }
    Verdicts row0;
    judge(rows, 0, &row0);
    welch_bh += row0.welch_bh;
    welch_raw += row0.welch_raw;
    overlap += row0.ci_overlap;
    mwu_bh += row0.mwu_bh;
  }
  std::printf("  %s\n", label);
  print_rate("  welch + BH q=0.05", welch_bh, trials);
  print_rate("  mwu + BH q=0.05", mwu_bh, trials);
  print_rate("  ci-overlap", overlap, trials);
  print_rate("  welch p<0.05, no correction", welch_raw, trials);
}

void power_for_two_percent() {
  constexpr std::size_t kTrials = 1000;
  std::printf("\n(b) power: a 2%% change at cv 1%%, normal noise (goal >= 90%% for welch + BH)\n");
  power("alone (a report of 1 row), 10 samples a side", 1, 1, 10, 0.02, 0.01, kTrials);
  power("in a 150-row report, only this row changed, 10 samples a side", 150, 1, 10, 0.02, 0.01,
        kTrials);
  power("in a 150-row report, 20 rows changed by 2%, 10 samples a side", 150, 20, 10, 0.02, 0.01,
        kTrials);
  power("in a 150-row report, only this row changed, 15 samples a side", 150, 1, 15, 0.02, 0.01,
        kTrials);
  power("in a 150-row report, only this row changed, 20 samples a side", 150, 1, 20, 0.02, 0.01,
        kTrials);
  std::printf("  noise floor (welch, alpha 0.05, power 0.8) at cv 1%%: n=10 %.2f%%, n=15 %.2f%%, "
              "n=20 %.2f%%\n",
              st::noise_floor_percent(10, 0.01), st::noise_floor_percent(15, 0.01),
              st::noise_floor_percent(20, 0.01));
  // The noise floor is an approximation (shifted central t instead of the
  // noncentral t): check it against simulated power at that change.
  const double floor10 = st::noise_floor_percent(10, 0.01) / 100;
  std::size_t hits = 0;
  constexpr std::size_t kFloorTrials = 20000;
  for (std::size_t t = 0; t < kFloorTrials; ++t) {
    const auto a = draw(10, 1000.0, 10.0), b = draw(10, 1000.0 * (1 + floor10), 10.0);
    hits += st::welch_t_test(a, b).p_value < kAlpha;
  }
  print_rate("simulated welch power at the n=10 noise floor (target 80%)", hits, kFloorTrials);
}

// Samples of one profile: `sessions` boots, each with its own offset drawn
// with sd `session_sd`, then `repeats` samples with sd `repeat_sd`.
std::vector<std::vector<double>> sessions_of(std::size_t sessions, std::size_t repeats, double mean,
                                             double session_sd, double repeat_sd) {
  std::vector<std::vector<double>> out;
  std::normal_distribution<double> boot(0.0, session_sd);
  for (std::size_t s = 0; s < sessions; ++s) out.push_back(draw(repeats, mean + boot(rng), repeat_sd));
  return out;
}

std::vector<double> pooled(const std::vector<std::vector<double>>& sessions) {
  std::vector<double> v;
  for (const auto& s : sessions) v.insert(v.end(), s.begin(), s.end());
  return v;
}

void session_effect(double session_sd, std::size_t kRows) {
  constexpr std::size_t kSessions = 3, kRepeats = 5;
  std::printf("\n(c) %zu sessions x %zu repeats a side, session sd %.0f%%, repeat sd 1%%,\n"
              "    A/A rows, per-row false-mark rate at p<0.05 (no BH, so the rate is per test)\n",
              kSessions, kRepeats, session_sd / 10.0);
  std::size_t naive = 0, means = 0, aware = 0, noisy_rows = 0, lenient = 0;
  for (std::size_t r = 0; r < kRows; ++r) {
    const auto a = sessions_of(kSessions, kRepeats, 1000.0, session_sd, 10.0);
    const auto b = sessions_of(kSessions, kRepeats, 1000.0, session_sd, 10.0);
    const bool naive_mark = st::welch_t_test(pooled(a), pooled(b)).p_value < kAlpha;
    const bool means_mark =
        st::welch_t_test(st::session_means(a), st::session_means(b)).p_value < kAlpha;
    const bool noisy = st::session_noisy(st::session_variance(a)) ||
                       st::session_noisy(st::session_variance(b));
    // A more cautious switch: any positive between-session component.
    const bool any_between = st::session_variance(a).between > 0 ||
                             st::session_variance(b).between > 0;
    naive += naive_mark;
    means += means_mark;
    noisy_rows += noisy;
    aware += noisy ? means_mark : naive_mark;
    lenient += any_between ? means_mark : naive_mark;
  }
  print_rate("naive: welch on all 15 vs 15 samples", naive, kRows);
  print_rate("welch on session means (3 vs 3), always", means, kRows);
  print_rate("session-aware: session means when a side is session-noisy", aware, kRows);
  print_rate("rows flagged session-noisy (between >= within)", noisy_rows, kRows);
  print_rate("session means when a side has any between > 0", lenient, kRows);

  // The price: power for a 2% change with the same design.
  std::size_t naive_power = 0, means_power = 0, aware_power = 0, lenient_power = 0;
  const std::size_t kPowerRows = kRows / 4;
  for (std::size_t r = 0; r < kPowerRows; ++r) {
    const auto a = sessions_of(kSessions, kRepeats, 1000.0, session_sd, 10.0);
    const auto b = sessions_of(kSessions, kRepeats, 1020.0, session_sd, 10.0);
    const bool naive_mark = st::welch_t_test(pooled(a), pooled(b)).p_value < kAlpha;
    const bool means_mark =
        st::welch_t_test(st::session_means(a), st::session_means(b)).p_value < kAlpha;
    const bool noisy = st::session_noisy(st::session_variance(a)) ||
                       st::session_noisy(st::session_variance(b));
    const bool any_between = st::session_variance(a).between > 0 ||
                             st::session_variance(b).between > 0;
    naive_power += naive_mark;
    means_power += means_mark;
    aware_power += noisy ? means_mark : naive_mark;
    lenient_power += any_between ? means_mark : naive_mark;
  }
  std::printf("  power for a real 2%% change with the same design:\n");
  print_rate("  naive", naive_power, kPowerRows);
  print_rate("  session means, always", means_power, kPowerRows);
  print_rate("  session-aware", aware_power, kPowerRows);
  print_rate("  session means when any between > 0", lenient_power, kPowerRows);
}


// --- the session-level test (docs/statistics.md, "Sessions are the replicates")
// Noise on the log scale: each session of a row is offset by a normal effect
// of sd `session_sd`, each repeat inside it by one of sd `within_sd`.
struct Design {
  double session_sd = 0.03;
  double within_sd = 0.005;
  std::size_t repeats = 3;
};

std::vector<std::vector<double>> simulate_sessions(std::size_t sessions, const Design& d, double log_change) {
  std::normal_distribution<double> session(0.0, d.session_sd), repeat(0.0, d.within_sd);
  std::vector<std::vector<double>> out(sessions);
  for (auto& s : out) {
    const double offset = log_change + session(rng);
    for (std::size_t r = 0; r < d.repeats; ++r) s.push_back(1000.0 * std::exp(offset + repeat(rng)));
  }
  return out;
}

// The noise model: `profiles` other profiles of `sessions` sessions each with
// the same noise (prior df = profiles * (sessions - 1)).
st::NoisePrior simulate_prior(std::size_t profiles, std::size_t sessions, const Design& d) {
  std::vector<std::vector<double>> means;
  for (std::size_t p = 0; p < profiles; ++p) means.push_back(st::session_means(simulate_sessions(sessions, d, 0)));
  return st::pool_log_session_variance(means);
}

// Wilson interval for a rate without the label column padding of print_rate.
std::string rate_text(std::size_t hits, std::size_t trials) {
  const double n = static_cast<double>(trials), p = hits / n, z = 1.959963984540054;
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  char text[64];
  std::snprintf(text, sizeof text, "%6.2f%% [%5.2f,%6.2f]", 100 * p, 100 * (centre - half), 100 * (centre + half));
  return text;
}

void session_test_with_a_boot_effect() {
  const Design d;  // session sd 3%, within 0.5%, 3 repeats
  constexpr std::size_t kRows = 20000, kPowerRows = 4000, kReports = 1000, kReportRows = 77;
  std::printf("\n(d) the session test: 3 sessions x %zu repeats a side, session sd %.1f%%, within sd %.1f%% "
              "(log scale)\n    per-row false-mark rate at p<0.05 (A/A), per-row power, and reports of %zu A/A rows "
              "with BH q=0.05\n",
              d.repeats, d.session_sd * 100, d.within_sd * 100, kReportRows);
  std::size_t welch = 0, session = 0;
  for (std::size_t r = 0; r < kRows; ++r) {
    const auto a = simulate_sessions(3, d, 0), b = simulate_sessions(3, d, 0);
    welch += st::welch_t_test(pooled(a), pooled(b)).p_value < kAlpha;
    session += st::session_test(st::session_means(a), st::session_means(b), {}).p_value < kAlpha;
  }
  print_rate("A/A: old welch on pooled repeats (9 vs 9)", welch, kRows);
  print_rate("A/A: session test, no prior (3 vs 3; goal <= 5%)", session, kRows);
  std::size_t welch_reports = 0, session_reports = 0;
  std::vector<double> welch_p(kReportRows), session_p(kReportRows);
  for (std::size_t rep = 0; rep < kReports; ++rep) {
    for (std::size_t i = 0; i < kReportRows; ++i) {
      const auto a = simulate_sessions(3, d, 0), b = simulate_sessions(3, d, 0);
      welch_p[i] = st::welch_t_test(pooled(a), pooled(b)).p_value;
      session_p[i] = st::session_test(st::session_means(a), st::session_means(b), {}).p_value;
    }
    const auto wq = st::benjamini_hochberg(welch_p), sq = st::benjamini_hochberg(session_p);
    welch_reports += std::any_of(wq.begin(), wq.end(), [](double q) { return q <= kFdr; });
    session_reports += std::any_of(sq.begin(), sq.end(), [](double q) { return q <= kFdr; });
  }
  print_rate("reports with any mark: old welch on pooled repeats + BH", welch_reports, kReports);
  print_rate("reports with any mark: session test + BH (goal <= 5%)", session_reports, kReports);
  for (const double change : {0.05, 0.10, 0.20}) {
    std::size_t hits = 0;
    for (std::size_t r = 0; r < kPowerRows; ++r) {
      const auto a = simulate_sessions(3, d, 0), b = simulate_sessions(3, d, std::log1p(change));
      hits += st::session_test(st::session_means(a), st::session_means(b), {}).p_value < kAlpha;
    }
    char label[96];
    std::snprintf(label, sizeof label, "power, session test, true change %.0f%% (p<0.05)", change * 100);
    print_rate(label, hits, kPowerRows);
  }
  std::printf("  session floor (3 a side, no prior, alpha 0.05, power 0.8): %.2f%%\n",
              st::session_floor_percent(3, d.session_sd * d.session_sd + d.within_sd * d.within_sd / 3, 0));
}

void noise_model_with_few_sessions() {
  const Design d;
  constexpr std::size_t kRows = 10000;
  std::printf("\n(e) the noise model: 1 or 2 sessions a side, prior from other profiles of 3 sessions with the same\n"
              "    noise (session sd 3%%, within 0.5%%); per-row rate at p<0.05: A/A | true 10%% | true 20%%\n");
  std::printf("  %-34s %-24s %-24s %s\n", "design", "A/A (goal <= 5%)", "power, 10%", "power, 20%");
  for (const std::size_t sessions : {1u, 2u}) {
    for (const std::size_t prior_profiles : {2u, 4u, 10u}) {  // d0 = 4, 8, 20
      std::size_t counts[3] = {0, 0, 0};
      const double changes[3] = {0.0, 0.10, 0.20};
      for (int c = 0; c < 3; ++c) {
        for (std::size_t r = 0; r < kRows; ++r) {
          const auto prior = simulate_prior(prior_profiles, 3, d);
          const auto a = simulate_sessions(sessions, d, 0), b = simulate_sessions(sessions, d, std::log1p(changes[c]));
          counts[c] += st::session_test(st::session_means(a), st::session_means(b), prior).p_value < kAlpha;
        }
      }
      char label[64];
      std::snprintf(label, sizeof label, "%zu a side, prior d0 = %zu", sessions, prior_profiles * 2);
      std::printf("  %-34s %-24s %-24s %s\n", label, rate_text(counts[0], kRows).c_str(),
                  rate_text(counts[1], kRows).c_str(), rate_text(counts[2], kRows).c_str());
    }
  }
}

void equivalence_verdict() {
  constexpr std::size_t kRows = 10000;
  constexpr double kMargin = 2.0;  // --min-change, percent
  std::printf("\n(f) the equivalence verdict: \"unchanged\" when the 95%% CI of the change lies inside +-%.0f%%;\n"
              "    3 sessions a side plus a prior of d0 = 8 (4 other profiles of 3 sessions); within sd 0.5%%\n",
              kMargin);
  std::printf("  %-22s %-26s %-26s %s\n", "session sd", "unchanged | true 0%", "unchanged | true 1%",
              "unchanged | true 5% (<= 2.5%)");
  for (const double session_sd : {0.002, 0.005, 0.01, 0.03}) {
    Design d;
    d.session_sd = session_sd;
    std::size_t counts[3] = {0, 0, 0};
    const double changes[3] = {0.0, 0.01, 0.05};
    for (int c = 0; c < 3; ++c) {
      for (std::size_t r = 0; r < kRows; ++r) {
        const auto prior = simulate_prior(4, 3, d);
        const auto a = simulate_sessions(3, d, 0), b = simulate_sessions(3, d, std::log1p(changes[c]));
        const auto t = st::session_test(st::session_means(a), st::session_means(b), prior);
        counts[c] += t.valid && t.ci_low_pct >= -kMargin && t.ci_high_pct <= kMargin;
      }
    }
    char label[32];
    std::snprintf(label, sizeof label, "%.1f%%", session_sd * 100);
    std::printf("  %-22s %-26s %-26s %s\n", label, rate_text(counts[0], kRows).c_str(),
                rate_text(counts[1], kRows).c_str(), rate_text(counts[2], kRows).c_str());
  }
}

// One row of a sequential report: its sessions so far and its verdict.
struct SequentialRow {
  Design design;
  double log_change = 0;
  std::vector<double> a, b;  // session means
  bool marked = false, unchanged = false;
  bool decided() const { return marked || unchanged; }
};

struct SequentialOutcome {
  bool any_mark = false;
  bool watched_marked = false;   // row 0
  std::size_t sessions = 0;      // per side, summed over rows
  std::size_t watched_sessions = 0;
};

// --until-decided: every look tests all rows (BH over the report at level
// q / looks, the CI at 1 - alpha / looks); marked or unchanged rows stop,
// undecided rows get one more session a side, up to `extra_looks` times.
SequentialOutcome run_sequential(std::vector<SequentialRow>& rows, std::size_t start, std::size_t extra_looks,
                                 double divide_by) {
  constexpr double kMinChange = 2.0;
  for (auto& row : rows) {
    row.a = st::session_means(simulate_sessions(start, row.design, 0));
    row.b = st::session_means(simulate_sessions(start, row.design, row.log_change));
    row.marked = row.unchanged = false;
  }
  const double level = kFdr / divide_by;
  std::vector<double> p(rows.size());
  std::vector<st::SessionTest> tests(rows.size());
  for (std::size_t look = 0; look <= extra_looks; ++look) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      tests[i] = st::session_test(rows[i].a, rows[i].b, {}, 1 - level);
      p[i] = tests[i].p_value;
    }
    const auto q = st::benjamini_hochberg(p);
    bool undecided = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto& row = rows[i];
      if (row.decided()) continue;
      const double change = std::expm1(tests[i].log_change) * 100;
      row.marked = q[i] <= level && std::abs(change) >= kMinChange;
      row.unchanged = !row.marked && tests[i].ci_low_pct >= -kMinChange && tests[i].ci_high_pct <= kMinChange;
      if (!row.decided() && look < extra_looks) {
        undecided = true;
        row.a.push_back(st::session_means(simulate_sessions(1, row.design, 0))[0]);
        row.b.push_back(st::session_means(simulate_sessions(1, row.design, row.log_change))[0]);
      }
    }
    if (!undecided) break;
  }
  SequentialOutcome out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out.any_mark |= rows[i].marked;
    out.sessions += rows[i].a.size();
  }
  out.watched_marked = rows[0].marked;
  out.watched_sessions = rows[0].a.size();
  return out;
}

std::vector<SequentialRow> sequential_report(std::size_t n_rows, double watched_change) {
  std::vector<SequentialRow> rows(n_rows);
  for (std::size_t i = 0; i < n_rows; ++i) {
    rows[i].design.session_sd = i == 0 ? 0.01 : uniform(0.002, 0.02);
    rows[i].log_change = i == 0 ? std::log1p(watched_change) : 0.0;
  }
  return rows;
}

void until_decided() {
  constexpr std::size_t kReports = 600, kRows = 77, kStart = 3, kExtra = 4;
  constexpr double kChange = 0.05;
  std::printf("\n(g) --until-decided: reports of %zu rows, session sd per row uniform in [0.2%%, 2%%], within 0.5%%;\n"
              "    start with %zu sessions a side, add 1 a side to undecided rows, up to %zu extra looks; mark: BH q <=\n"
              "    0.05/L and |change| >= 2%%; unchanged: the (1 - 0.05/L) CI inside +-2%%. Power: row 0, session sd 1%%,\n"
              "    true change %.0f%%, among %zu A/A rows\n",
              kRows, kStart, kExtra, kChange * 100, kRows - 1);
  std::printf("  %-38s %-26s %-26s %-16s %s\n", "design", "reports with a mark (A/A)", "power (row 0)",
              "sessions/row", "row 0 sessions");
  const auto simulate = [&](const char* label, std::size_t start, std::size_t extra, double divide_by) {
    std::size_t any = 0, power = 0, sessions = 0, watched_sessions = 0;
    for (std::size_t r = 0; r < kReports; ++r) {
      auto null_rows = sequential_report(kRows, 0.0);
      const auto aa = run_sequential(null_rows, start, extra, divide_by);
      any += aa.any_mark;
      sessions += aa.sessions;
      auto rows = sequential_report(kRows, kChange);
      const auto changed = run_sequential(rows, start, extra, divide_by);
      power += changed.watched_marked;
      watched_sessions += changed.watched_sessions;
    }
    std::printf("  %-38s %-26s %-26s %-16.2f %.2f\n", label, rate_text(any, kReports).c_str(),
                rate_text(power, kReports).c_str(), double(sessions) / (kReports * kRows),
                double(watched_sessions) / kReports);
    return double(power) / kReports;
  };
  const double sequential_power =
      simulate("sequential, 5 looks, each at q/5", kStart, kExtra, static_cast<double>(kExtra + 1));
  simulate("sequential, 5 looks, each at q/4", kStart, kExtra, static_cast<double>(kExtra));
  simulate("naive: 5 looks, each at q", kStart, kExtra, 1.0);
  // Fixed designs: one look at q with n sessions a side; the first whose
  // power reaches the sequential one is "the fixed design with the same power".
  for (std::size_t n = kStart; n <= kStart + 2 * kExtra; ++n) {
    char label[48];
    std::snprintf(label, sizeof label, "fixed, %zu sessions a side, at q", n);
    const double fixed_power = simulate(label, n, 0, 1.0);
    if (fixed_power >= sequential_power) break;
  }
}

// --- runs (docs/statistics.md, "Runs: the run model") ------------------------
// Whole reports through compare itself (analysis::build_comparison with the
// sessions' runs, rounds and kernels), one per workflow a user has. Noise on
// the log scale: each session of a row is offset by N(0, session_sd), each
// repeat by N(0, within_sd), every session of a run by the run's effect and
// every session of a round (the s-th session of each part in one run, as
// plan exec alternates them) by the round's; both are shared across rows as
// a machine's drift is: sd * (0.7 * machine + 0.714 * own), machine and own
// N(0, 1) (correlation 0.49 between rows).
struct Workflow {
  const char* name;
  // Runs in order: which profile measures how many sessions in which run.
  struct Part {
    const char* profile;
    const char* kernel;
    int run;
    int sessions;
  };
  std::vector<Part> parts;
};

struct Noise {
  double run_sd = 0.02;
  double round_sd = 0;
  double session_sd = 0.01;
  double within_sd = 0.005;
  int repeats = 3;
};

// One report: `rows` rows; the first `changed` rows of profile "B" are
// `change` slower (lower is better, as a syscall's mean). Returns the marks
// in A/A rows, the (R) marks on the changed rows, and the rows tested.
struct Outcome {
  int false_marks = 0;
  int regressions_found = 0;
  int tested = 0;
};

Outcome simulate_report(const Workflow& w, const Noise& noise, int rows, int changed, double change) {
  std::normal_distribution<double> unit(0.0, 1.0);
  int runs = 0;
  for (const auto& part : w.parts) runs = std::max(runs, part.run + 1);
  int rounds_per_run = 0;
  for (const auto& part : w.parts) rounds_per_run = std::max(rounds_per_run, part.sessions);
  std::vector<double> machine(static_cast<std::size_t>(runs));
  for (auto& m : machine) m = unit(rng);
  std::vector<double> machine_round(static_cast<std::size_t>(runs * rounds_per_run));
  for (auto& m : machine_round) m = unit(rng);
  std::vector<kbench::store::SampleRow> samples;
  kbench::analysis::SessionOrigins origins;
  std::int64_t next_session = 1;
  std::vector<std::int64_t> first_session_of_part;
  for (const auto& part : w.parts) {
    first_session_of_part.push_back(next_session);
    for (int s = 0; s < part.sessions; ++s) {
      origins[next_session] = {"run-" + std::to_string(part.run), part.kernel, std::to_string(s), {}, {}};
      ++next_session;
    }
  }
  for (int row = 0; row < rows; ++row) {
    std::vector<double> run_effect(static_cast<std::size_t>(runs));
    for (int r = 0; r < runs; ++r) run_effect[r] = noise.run_sd * (0.7 * machine[r] + 0.714 * unit(rng));
    std::vector<double> round_effect(machine_round.size());
    for (std::size_t b = 0; b < round_effect.size(); ++b)
      round_effect[b] = noise.round_sd * (0.7 * machine_round[b] + 0.714 * unit(rng));
    const double level = 100.0 * (row + 1);
    for (std::size_t p = 0; p < w.parts.size(); ++p) {
      const auto& part = w.parts[p];
      const bool slower = std::string(part.profile) == "B" && row < changed;
      for (int s = 0; s < part.sessions; ++s) {
        const double offset = run_effect[part.run] + round_effect[part.run * rounds_per_run + s] +
                              noise.session_sd * unit(rng) + (slower ? std::log1p(change) : 0);
        for (int r = 0; r < noise.repeats; ++r) {
          kbench::store::SampleRow sample;
          sample.sut = "vm";
          sample.swprofile = part.profile;
          sample.session = first_session_of_part[p] + s;
          sample.benchmark = "row/" + std::to_string(row);
          sample.result_class = {"mean", "ns", kbench::Better::Lower};
          sample.repeat = r;
          sample.value = level * std::exp(offset + noise.within_sd * unit(rng));
          samples.push_back(std::move(sample));
        }
      }
    }
  }
  kbench::analysis::CompareOptions options;
  options.base = "A";
  options.tests = {"B"};
  const auto report = kbench::analysis::build_comparison(samples, options, origins);
  Outcome out;
  out.tested = report.legend.rows_tested;
  for (const auto& table : report.tables) {
    for (const auto& row : table.rows) {
      const int index = std::stoi(row.benchmark.substr(4));
      const auto verdict = row.cells.at(0).verdict;
      const bool marked =
          verdict == kbench::analysis::Verdict::Improvement || verdict == kbench::analysis::Verdict::Regression;
      if (index >= changed && marked) ++out.false_marks;
      if (index < changed && verdict == kbench::analysis::Verdict::Regression) ++out.regressions_found;
    }
  }
  return out;
}

void runs() {
  constexpr int kReports = 300, kRows = 12, kChanged = 3;
  // kbench calibrate's defaults: 6 sessions, each paused (a run of its own).
  const auto calibrate = [](int first_run) {
    std::vector<Workflow::Part> parts;
    for (int b = 0; b < 6; ++b) parts.push_back({"calibrate", "kernel-a", first_run + b, 1});
    return parts;
  };
  // kbench run --spread: every session of A and of B a run of its own.
  const auto spread_runs = [] {
    std::vector<Workflow::Part> parts;
    for (int s = 0; s < 5; ++s) parts.push_back({"A", "kernel-a", s, 1});
    for (int s = 0; s < 5; ++s) parts.push_back({"B", "kernel-b", 5 + s, 1});
    return parts;
  };
  const auto join = [](std::vector<Workflow::Part> a, const std::vector<Workflow::Part>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<Workflow> workflows = {
      {"first compare, fresh SUT", {{"A", "kernel-a", 0, 5}, {"B", "kernel-b", 1, 5}}},
      {"first compare, --spread", spread_runs()},
      {"base run twice", {{"A", "kernel-a", 0, 5}, {"A", "kernel-a", 1, 5}, {"B", "kernel-b", 2, 5}}},
      {"after kbench calibrate", join(calibrate(0), {{"A", "kernel-a", 6, 5}, {"B", "kernel-b", 7, 5}})},
      {"mixed: old run + plan", {{"A", "kernel-a", 0, 4}, {"A", "kernel-a", 1, 3}, {"B", "kernel-b", 1, 3}}},
      {"interleaved plan exec", {{"A", "kernel-a", 0, 5}, {"B", "kernel-b", 0, 5}}},
  };
  std::printf("\n(h) runs, whole reports through compare: %d rows (lower is better), session sd 1%%, repeats 3 at\n"
              "    0.5%%; run effects of sd run_sd and round effects of sd round_sd, each shared 0.49 across rows\n"
              "    (the machine). A/A: reports with any mark. Power: share of %d rows %d%% / 5%% slower marked (R)\n"
              "    (%d reports each).\n",
              kRows, kChanged, 10, kReports);
  std::printf("  %-26s %-7s %-9s %-22s %-14s %-20s %s\n", "workflow", "run_sd", "round_sd", "A/A: any mark",
              "rows tested", "10% slower: (R)", "5% slower: (R)");
  for (const auto& w : workflows) {
    for (const auto& [run_sd, round_sd] : {std::pair{0.0, 0.0}, {0.02, 0.0}, {0.05, 0.0}, {0.02, 0.02}}) {
      Noise noise;
      noise.run_sd = run_sd;
      noise.round_sd = round_sd;
      std::size_t aa_any = 0, tested = 0, found10 = 0, found5 = 0;
      for (int rep = 0; rep < kReports; ++rep) {
        const auto aa = simulate_report(w, noise, kRows, 0, 0);
        aa_any += aa.false_marks > 0;
        tested += static_cast<std::size_t>(aa.tested);
        found10 += static_cast<std::size_t>(simulate_report(w, noise, kRows, kChanged, 0.10).regressions_found);
        found5 += static_cast<std::size_t>(simulate_report(w, noise, kRows, kChanged, 0.05).regressions_found);
      }
      char sd[16], round_text[16], rows_tested[32];
      std::snprintf(sd, sizeof sd, "%.0f%%", run_sd * 100);
      std::snprintf(round_text, sizeof round_text, "%.0f%%", round_sd * 100);
      std::snprintf(rows_tested, sizeof rows_tested, "%.1f of %d", static_cast<double>(tested) / kReports, kRows);
      std::printf("  %-26s %-7s %-9s %-22s %-14s %-20s %s\n", w.name, sd, round_text, rate_text(aa_any, kReports).c_str(),
                  rows_tested, rate_text(found10, kReports * kChanged).c_str(),
                  rate_text(found5, kReports * kChanged).c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("stats-calibration: seed 20261129, std::mt19937_64, normal noise\n\n");
  // `runs`: only the whole-report section (h), the one compare's run model changes.
  if (argc > 1 && std::string(argv[1]) == "runs") {
    runs();
    return 0;
  }
  false_marks_in_aa_reports();
  power_for_two_percent();
  session_effect(10.0, 20000);  // a session effect as large as the repeat noise
  session_effect(0.0, 8000);    // none: what the session rules cost
  session_test_with_a_boot_effect();
  noise_model_with_few_sessions();
  equivalence_verdict();
  until_decided();
  runs();
  return 0;
}
