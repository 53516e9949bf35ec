#pragma once
// The compare engine: stored samples in, the report table model out.
#include <optional>
#include <string>
#include <vector>

#include "analysis/test_method.h"
#include "report/model.h"
#include "store/result_store.h"

namespace kbench::analysis {

// How repeats from several sessions (boots) of a profile are tested.
//   auto:   per row, when both sides have >= 2 sessions and the between-session
//           variance component dominates on either side, test the session
//           means (and mark the cell session-noisy); otherwise pooled repeats.
//   pooled: always every repeat as an independent sample (the field's habit).
//   means:  always the session means where both sides have >= 2 sessions.
enum class SessionMode { Auto, Pooled, Means };

// "auto" | "pooled" | "means"; throws InputError naming the option otherwise.
SessionMode parse_session_mode(const std::string& text);
std::string to_string(SessionMode mode);

struct CompareOptions {
  std::string base;
  std::vector<std::string> tests;
  TestMethod method = TestMethod::Welch;
  std::optional<double> fdr = 0.05; // Benjamini-Hochberg level; nullopt: off
  double alpha = 0.05;              // per-row level when fdr is off
  report::SignConvention sign = report::SignConvention::Better;
  double min_change_pct = 0;        // smaller changes stay unmarked
  SessionMode sessions = SessionMode::Auto;
};

// Rows of every SUT on which the base profile has data. Samples of other
// profiles are ignored.
report::Report build_comparison(const std::vector<store::SampleRow>& samples, const CompareOptions& options);

// One table per SUT for one profile; `session` restricts it to one session.
std::vector<report::ProfileTable> build_profile_tables(const std::vector<store::SampleRow>& samples,
                                                       const std::string& swprofile,
                                                       std::optional<std::int64_t> session = std::nullopt);

// "fix_size: p:4" < "fix_size: p:16": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace kbench::analysis
