#pragma once
// The compare engine: stored samples in, the report table model out.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report_model.h"
#include "analysis/test_method.h"
#include "store/result_store.h"

namespace kbench::analysis {

// What a row is tested on.
//   sessions: one value per session, the log of its mean, with the SUT's noise
//             model as prior (stats::session_test): sessions are what varies.
//   pooled:   every repeat as an independent sample (the field's habit; on
//             machines whose sessions differ it marks noise, docs/statistics.md).
enum class SessionMode { Sessions, Pooled };

// "sessions" | "pooled"; throws InputError naming the option otherwise.
SessionMode parse_session_mode(const std::string& text);
std::string to_string(SessionMode mode);

inline constexpr double kDefaultMinChangePct = 2.0;

struct CompareOptions {
  std::string base;
  std::vector<std::string> tests;
  TestMethod method = TestMethod::Welch;
  std::optional<double> fdr = 0.05; // Benjamini-Hochberg level; nullopt: off
  double alpha = 0.05;              // per-row level when fdr is off
  SignConvention sign = SignConvention::Better;
  // Smaller changes are never marked; a CI inside +-min_change_pct reads
  // "unchanged". 0: no equivalence verdict.
  double min_change_pct = kDefaultMinChangePct;
  SessionMode sessions = SessionMode::Sessions;
  // Sequential looks (--until-decided): each look tests at level / looks.
  int looks = 1;
  // One table per SUT (--per-sut); else one per SUT class, pooling the
  // class's machines with the machine as a level of variation.
  bool per_sut = false;
  // Copy every row's samples by session into Row::samples (the html
  // report plots them); off, the model holds summaries only.
  bool keep_samples = false;
};

// Where a session was measured beyond its swprofile: its run (sessions
// measured back to back: one `kbench run`, or one paused session of
// `kbench calibrate --spread`) and its kernel (the fingerprint's identity of
// kernel, config, cmdline and declared settings). analysis/runs.h reads them
// from the store.
struct SessionOrigin {
  std::string run;
  std::string kernel;
  // The round inside the run: sessions of a plan's swprofiles measured one
  // after the other, one of each (plan.session); empty: a round of its own.
  std::string round;
  // Under a paired design (docs/statistics.md, "Paired designs"): the pair
  // of sessions measured at the same moment, and the unit this session ran
  // on (the SUT under crossover, the CPU set under duet); empty otherwise.
  std::string pair;
  std::string pair_unit;
};
using SessionOrigins = std::map<std::int64_t, SessionOrigin>;

// Rows of every SUT on which the base profile has data. Samples of profiles
// not compared teach the noise model (the prior of the session test) of their
// SUT; give them too. With `origins`, sides measured in different runs are
// tested with the run-to-run noise the SUT's other kernels measured in
// several runs show (no model: the row is not tested, and says why); without,
// runs are not modelled (tests of the session statistics alone).
Report build_comparison(const std::vector<store::SampleRow>& samples, const CompareOptions& options,
                        const std::optional<SessionOrigins>& origins = std::nullopt);

// One table per SUT for one profile; `session` restricts it to one session.
std::vector<ProfileTable> build_profile_tables(const std::vector<store::SampleRow>& samples,
                                               const std::string& swprofile,
                                               std::optional<std::int64_t> session = std::nullopt);

// "fix_size: p:4" < "fix_size: p:16": digit runs compare as numbers; texts
// that are equal as numbers ("a01", "a1") by their bytes, so that no two
// texts are equivalent.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace kbench::analysis
