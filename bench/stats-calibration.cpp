// Simulated comparisons with known truth: how often kbench's verdicts are
// wrong (false marks in A/A reports) and how often they are right (power),
// for the methods it offers. Fixed seeds: every run prints the same figures.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

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

}  // namespace

int main() {
  std::printf("stats-calibration: seed 20261129, std::mt19937_64, normal noise\n\n");
  false_marks_in_aa_reports();
  power_for_two_percent();
  session_effect(10.0, 20000);  // a session effect as large as the repeat noise
  session_effect(0.0, 8000);    // none: what the session rules cost
  return 0;
}
