// kbench bisect run|step: find the commit that made a benchmark row worse,
// classifying every commit against the good and bad endpoints' measured
// distributions and measuring more sessions until that is settled
// (src/analysis/bisect.h, docs/bisect.md).

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "analysis/bisect.h"
#include "analysis/compare.h"
#include "build/kernel_build.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "runner/catalogue.h"
#include "runner/interrupt.h"
#include "runner/plan_executor.h"
#include "runner/progress.h"
#include "stats/stats.h"
#include "sut/method.h"
#include "sut/process.h"

namespace kbench::cli {

namespace {

namespace fs = std::filesystem;

struct BisectOptions {
  std::string plan_path;
  std::string good;
  std::string bad;
  std::vector<std::string> rows;  // 'BENCH:CLASS'
  std::string sessions = "3";
  std::string max_sessions = "12";
  std::string alpha = "0.01";
  std::string store_url;
  std::string build_cache;
  std::string cpus;
  bool strict = false;
};

// One benchmark row: the benchmark and the result class's label "mean (ns)".
struct RowKey {
  std::string benchmark;
  std::string label;
  bool operator<(const RowKey& other) const {
    return std::tie(benchmark, label) < std::tie(other.benchmark, other.label);
  }
  std::string name() const { return benchmark + ":" + label; }
};

RowKey parse_row(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw InputError("--row '" + text + "': expected BENCH:CLASS, e.g. 'syscall/getppid:mean (ns)'");
  }
  return {text.substr(0, colon), text.substr(colon + 1)};
}

// --- git ----------------------------------------------------------------------

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

sut::CommandResult git_result(const std::string& dir, std::vector<std::string> args) {
  std::vector<std::string> argv{"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return sut::run_command(argv, "", std::chrono::minutes(10));
}

std::string git(const std::string& dir, std::vector<std::string> args) {
  const auto result = git_result(dir, args);
  if (result.exit_status != 0) {
    throw RunError(fmt::format("git {} in {} failed: {}", fmt::join(args, " "), dir, trim(result.err)));
  }
  return trim(result.out);
}

std::string resolve_commit(const std::string& tree, const std::string& rev, const std::string& option) {
  const auto result = git_result(tree, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (result.exit_status != 0) throw InputError(option + " " + rev + ": expected a commit of " + tree);
  return trim(result.out);
}

std::string subject_of(const std::string& tree, const std::string& sha) {
  return git(tree, {"log", "-1", "--format=%s", sha});
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

// A fraction as whole percent for the log; rounding to zero from below would
// print "-0".
double whole_percent(double fraction) {
  const double percent = std::round(fraction * 100);
  return percent == 0 ? 0.0 : percent;
}

// A worktree of the source owned by kbench (git bisect checks out commits in
// it; the user's checkout is never touched), removed when done.
class OwnedWorktree {
 public:
  OwnedWorktree(std::string source, const std::string& commit) : source_(std::move(source)) {
    std::string pattern = (fs::temp_directory_path() / "kbench-bisect-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw RunError("cannot create a temporary directory for the bisect worktree");
    dir_ = pattern;
    fs::remove(dir_);
    git(source_, {"worktree", "add", "--detach", "--quiet", dir_, commit});
  }
  ~OwnedWorktree() {
    git_result(dir_, {"bisect", "reset"});
    git_result(source_, {"worktree", "remove", "--force", dir_});
  }
  OwnedWorktree(const OwnedWorktree&) = delete;
  OwnedWorktree& operator=(const OwnedWorktree&) = delete;
  const std::string& dir() const { return dir_; }
  void checkout(const std::string& commit) {
    if (git(dir_, {"rev-parse", "HEAD"}) != commit) git(dir_, {"checkout", "--detach", "--quiet", commit});
  }

 private:
  std::string source_;
  std::string dir_;
};

// --- measuring a commit -----------------------------------------------------

struct Commit {
  std::string sha;
  std::string subject;
  std::string profile;           // bisect-<12 hex>
  std::vector<std::int64_t> sessions;  // the store's ids of the sessions used
  std::string build;             // "cached", "incremental 41.2 s", "built 310.5 s", "failed"
  int boots = 0;
  std::string failure;           // why the commit could not be measured (build, boot, benchmark)
  std::optional<plan::SwprofileSpec> spec;  // the swprofile, built
};

class Bisector {
 public:
  explicit Bisector(const BisectOptions& options)
      : options_(options), plan_(plan::load_plan(options.plan_path)) {
    if (plan_.swprofiles.size() != 1 || !plan_.swprofiles.front().build) {
      throw InputError(options.plan_path + ": expected exactly one swprofile, with build: (a git tree)");
    }
    if (!plan_.suts.empty()) throw InputError(options.plan_path + ": expected one sut:, not a suts: list");
    source_ = plan_.swprofiles.front().build->source;
    const auto inside = git_result(source_, {"rev-parse", "--is-inside-work-tree"});
    if (inside.exit_status != 0) throw InputError(options.plan_path + ": build source " + source_ + ": expected a git tree");
    first_sessions_ = parse_integer("--sessions", options.sessions, 2, plan::kMaxSessions);
    max_sessions_ = parse_integer("--max-sessions", options.max_sessions, 2, plan::kMaxSessions);
    if (max_sessions_ < first_sessions_) throw InputError("--max-sessions " + options.max_sessions + ": expected at least --sessions (" + options.sessions + ")");
    alpha_ = parse_decimal("--alpha", options.alpha, 0);
    if (!(alpha_ > 0 && alpha_ < 1)) throw InputError("--alpha " + options.alpha + ": expected a level in (0, 1)");
    for (const auto& row : options.rows) rows_.push_back(parse_row(row));
    good_.sha = resolve_commit(source_, options.good, "--good");
    bad_.sha = resolve_commit(source_, options.bad, "--bad");
    if (good_.sha == bad_.sha) throw InputError("--good and --bad: expected two different commits");
    for (Commit* c : {&good_, &bad_}) init_commit(*c, c->sha);
    const sut::Method& method = plan::sut_method(plan_);
    if (plan_.sut && method.has(sut::Capability::BootsKernel)) per_profile_connection_ = true;
    local_sut_ = method.has(sut::Capability::OnController);
    local_ = sut::make_local_connection(sut::find_agent_binary());
    runs_ = runner::resolve_benchmarks(plan_, runner::fetch_catalogue(*local_));
    for (auto& run : runs_) run.settings.sessions = 1;
    if (plan_.sut && !per_profile_connection_) shared_connection_ = plan::connect(*plan_.sut, nullptr);
    build_options_.cache_dir = options.build_cache;
    build_options_.progress = [this](const std::string& line) {
      if (line.find("(incremental") != std::string::npos) build_incremental_ = true;
      std::cerr << "kbench: " << line << "\n";
    };
    store_url_ = resolve_store_url(options.store_url);
    store_ = store::open_store(store_url_, store::OpenMode::CreateIfMissing);
    runner::install_interrupt_handlers();
    looks_ = max_sessions_ - first_sessions_ + 1;
  }

  // kbench bisect run: the whole search. Returns the exit status.
  int run() {
    OwnedWorktree worktree(source_, good_.sha);
    tree_for_ = [&](const std::string& sha) {
      worktree.checkout(sha);
      return worktree.dir();
    };
    log(fmt::format("kbench bisect: {} ({}) good .. {} ({}) bad; plan {}; rows: {}; sessions {} to {} per commit, "
                    "alpha {} ({} per look over {} looks)",
                    short_sha(good_.sha), options_.good, short_sha(bad_.sha), options_.bad, options_.plan_path,
                    rows_.empty() ? "those marked (R) between the endpoints" : row_names(rows_), first_sessions_,
                    max_sessions_, alpha_, alpha_ / looks_, looks_));
    if (local_sut_) log("the plan's SUT is local: kernels are built but not booted, the running kernel is measured");
    measure_endpoints();
    if (!check_endpoints()) return finish(kExitFailure);

    const auto started = git_result(worktree.dir(), {"bisect", "start", bad_.sha, good_.sha});
    if (started.exit_status != 0) throw RunError("git bisect start failed: " + trim(started.err));
    std::string output = started.out;
    int step = 0;
    while (true) {
      if (const auto first_bad = first_bad_commit(output)) return report(*first_bad);
      if (output.find("only 'skip'ped commits left") != std::string::npos) {
        log("git bisect: only skipped commits are left; the first bad commit is one of:");
        log(trim(output.substr(output.find('\n') + 1)));
        return finish(kExitFailure);
      }
      const std::string head = git(worktree.dir(), {"rev-parse", "HEAD"});
      Commit& commit = candidate(head);
      const auto decision = measure_and_classify(commit, ++step);
      const std::string verb = decision == analysis::BisectDecision::Good  ? "good"
                               : decision == analysis::BisectDecision::Bad ? "bad"
                                                                            : "skip";
      const auto answer = git_result(worktree.dir(), {"bisect", verb, head});
      output = answer.out + answer.err;
      // With only skipped commits left git bisect says so and exits non-zero.
      if (answer.exit_status != 0 && output.find("only 'skip'ped commits left") == std::string::npos) {
        throw RunError("git bisect " + verb + " failed: " + trim(output));
      }
      if (runner::interrupted()) throw RunError("interrupted");
    }
  }

  // kbench bisect step: one commit (HEAD of the source tree) for git bisect run.
  int step() {
    tree_for_ = [this](const std::string& sha) -> std::string {
      if (sha == head_sha_) return source_;
      // An endpoint: measured in a worktree of its own, the user's tree stays as git bisect left it.
      auto& tree = endpoint_trees_[sha];
      if (!tree) tree = std::make_unique<OwnedWorktree>(source_, sha);
      return tree->dir();
    };
    head_sha_ = git(source_, {"rev-parse", "HEAD"});
    // The endpoints' sessions already in the store (earlier steps) count.
    for (Commit* c : {&good_, &bad_}) c->sessions = stored_sessions(c->profile);
    if (static_cast<int>(good_.sessions.size()) < first_sessions_ ||
        static_cast<int>(bad_.sessions.size()) < first_sessions_) {
      measure_endpoints();
    }
    endpoint_trees_.clear();
    if (!check_endpoints()) return 128;  // git bisect run stops on > 127
    Commit& commit = candidate(head_sha_);
    if (commit.sha == good_.sha) return 0;
    if (commit.sha == bad_.sha) return 1;
    commit.sessions = stored_sessions(commit.profile);
    const auto decision = measure_and_classify(commit, 0);
    store_->add_log("bisect", options_.good + ".." + options_.bad, text_.str());
    if (decision == analysis::BisectDecision::Good) return 0;
    if (decision == analysis::BisectDecision::Bad) return 1;
    std::cerr << "kbench: bisect step: skip " << short_sha(commit.sha) << ": " << last_why_ << "\n";
    return 125;
  }

 private:
  void init_commit(Commit& commit, const std::string& sha) {
    commit.sha = sha;
    commit.subject = subject_of(source_, sha);
    commit.profile = "bisect-" + short_sha(sha);
  }

  Commit& candidate(const std::string& sha) {
    if (sha == good_.sha) return good_;
    if (sha == bad_.sha) return bad_;
    auto [it, added] = commits_.try_emplace(sha);
    if (added) init_commit(it->second, sha);
    return it->second;
  }

  void log(const std::string& line) {
    text_ << line << "\n";
    std::cerr << line << "\n";
  }

  int finish(int status) {
    store_->add_log("bisect", options_.good + ".." + options_.bad, text_.str());
    return status;
  }

  // Builds the commit's kernel (once) and measures one session of it.
  bool measure_session(Commit& commit) {
    if (!commit.failure.empty()) return false;
    if (!commit.spec) {
      plan::SwprofileSpec spec = plan_.swprofiles.front();
      spec.name = commit.profile;
      spec.build->ref = commit.sha;
      build_incremental_ = false;
      try {
        const build::BuiltKernel built = build::build_kernel(*spec.build, spec.name, build_options_);
        spec.kernel.image = built.image;
        spec.kernel.config = built.config;
        // As resolve_builds: qemu boots the image alone.
        if (!per_profile_connection_) spec.kernel.modules = built.modules;
        spec.build_info = built.info;
        commit.build = built.cached ? "cached"
                       : fmt::format("{} {:.1f} s", build_incremental_ ? "incremental" : "full", built.seconds);
      } catch (const build::BuildFailed& e) {
        commit.build = "failed";
        commit.failure = std::string("build failed: ") + e.what();
        return false;
      }
      commit.spec = spec;
      if (per_profile_connection_) connections_[spec.name] = plan::connect(*plan_.sut, &spec);
    }
    const std::string tree = tree_for_(commit.sha);
    setenv("KBENCH_BISECT_TREE", tree.c_str(), 1);
    setenv("KBENCH_BISECT_COMMIT", commit.sha.c_str(), 1);
    plan::Plan one = plan_;
    one.swprofiles = {*commit.spec};
    if (local_sut_) {
      // A local SUT runs the running kernel: the build is made (and recorded
      // in the fingerprint) but not booted. Only tests use this.
      one.swprofiles.front().build.reset();
      one.swprofiles.front().kernel = {};
    }
    runner::ExecOptions exec;
    exec.cpus = options_.cpus;
    exec.strict = options_.strict;
    exec.plan_key = "kbench bisect " + fs::absolute(options_.plan_path).lexically_normal().string();
    runner::Progress progress(stderr, isatty(STDERR_FILENO) == 1, static_cast<int>(runs_.size()));
    const runner::ConnectionFor connection_for = [&](const plan::SwprofileSpec& profile) -> sut::Connection& {
      if (per_profile_connection_) return *connections_.at(profile.name);
      if (shared_connection_) return *shared_connection_;
      return *local_;
    };
    const runner::ExecResult result = runner::execute_plan(one, runs_, connection_for, *store_, exec, progress);
    if (result.interrupted_by != 0) {
      pending_exit_status() = 128 + result.interrupted_by;
      throw RunError(fmt::format("interrupted by signal {}", result.interrupted_by));
    }
    for (const auto& session : result.sessions) {
      commit.sessions.push_back(session.session);
      if (per_profile_connection_) commit.boots += static_cast<int>(session.outcomes.size());
    }
    if (result.failed_boots > 0) {
      commit.failure = "the kernel did not boot as asked (kbench list boots shows why)";
      return false;
    }
    if (result.failed > 0) {
      commit.failure = "a benchmark failed (kbench session show names it)";
      return false;
    }
    return true;
  }

  std::vector<std::int64_t> stored_sessions(const std::string& profile) {
    store::SampleQuery query;
    query.swprofiles = {profile};
    query.settled_only = true;
    std::set<std::int64_t> ids;
    for (const auto& row : store_->samples(query)) ids.insert(row.session);
    return {ids.begin(), ids.end()};
  }

  // Session means per row of the commit's sessions used.
  std::map<RowKey, std::vector<double>> session_means(const Commit& commit) {
    store::SampleQuery query;
    query.swprofiles = {commit.profile};
    query.settled_only = true;
    const std::set<std::int64_t> used(commit.sessions.begin(), commit.sessions.end());
    std::map<RowKey, std::map<std::int64_t, std::vector<double>>> by_row;
    for (const auto& row : store_->samples(query)) {
      if (!used.count(row.session)) continue;
      by_row[{row.benchmark, row.result_class.label()}][row.session].push_back(row.value);
    }
    std::map<RowKey, std::vector<double>> means;
    for (const auto& [key, sessions] : by_row) {
      std::vector<std::vector<double>> groups;
      for (const auto& [id, values] : sessions) groups.push_back(values);
      means[key] = stats::session_means(groups);
    }
    return means;
  }

  void measure_endpoints() {
    // Alternating, so drift falls on both.
    while ((static_cast<int>(good_.sessions.size()) < first_sessions_ ||
            static_cast<int>(bad_.sessions.size()) < first_sessions_)) {
      for (Commit* c : {&good_, &bad_}) {
        if (static_cast<int>(c->sessions.size()) >= first_sessions_) continue;
        if (!measure_session(*c)) {
          log(fmt::format("endpoint {} {}: {}", short_sha(c->sha), c->subject, c->failure));
          throw RunError(fmt::format("the {} endpoint {} cannot be measured: {}", c == &good_? "good" : "bad",
                                     short_sha(c->sha), c->failure));
        }
      }
    }
    for (const Commit* c : {&good_, &bad_}) {
      log(fmt::format("endpoint {} {} \"{}\": build {}, boots {}, sessions {}", c == &good_ ? "good" : "bad",
                      short_sha(c->sha), c->subject, c->build.empty() ? "-" : c->build, c->boots, c->sessions.size()));
    }
  }

  std::string row_names(const std::vector<RowKey>& rows) {
    std::vector<std::string> names;
    for (const auto& row : rows) names.push_back(row.name());
    return fmt::format("{}", fmt::join(names, ", "));
  }

  // Bad must differ from good before bisecting: with --row by the interval of
  // the change (analysis::check_endpoints), else the rows compare marks (R).
  bool check_endpoints() {
    good_means_ = session_means(good_);
    bad_means_ = session_means(bad_);
    if (rows_.empty()) {
      store::SampleQuery query;
      query.swprofiles = {good_.profile, bad_.profile};
      query.settled_only = true;
      const std::set<std::int64_t> used = [&] {
        std::set<std::int64_t> ids(good_.sessions.begin(), good_.sessions.end());
        ids.insert(bad_.sessions.begin(), bad_.sessions.end());
        return ids;
      }();
      std::vector<store::SampleRow> samples;
      for (auto& row : store_->samples(query))
        if (used.count(row.session)) samples.push_back(std::move(row));
      analysis::CompareOptions compare;
      compare.base = good_.profile;
      compare.tests = {bad_.profile};
      compare.fdr = alpha_;
      const report::Report report = analysis::build_comparison(samples, compare);
      for (const auto& table : report.tables)
        for (const auto& row : table.rows)
          if (!row.cells.empty() && row.cells.front().verdict == report::Verdict::Regression)
            rows_.push_back({row.benchmark, row.result_class.label()});
      if (rows_.empty()) {
        log(fmt::format("endpoints: no row of {} vs {} is marked (R) at false discovery rate {} "
                        "(kbench compare {} {} shows the table); nothing to bisect",
                        short_sha(bad_.sha), short_sha(good_.sha), alpha_, good_.profile, bad_.profile));
        return false;
      }
      log("endpoints: rows marked (R) by compare: " + row_names(rows_));
    }
    bool all_differ = true;
    for (const auto& row : rows_) {
      const auto g = good_means_.find(row);
      const auto b = bad_means_.find(row);
      if (g == good_means_.end() || b == bad_means_.end()) {
        log(fmt::format("endpoints: row {}: not measured on both endpoints (the plan's benchmarks and their result "
                        "classes: kbench show {})", row.name(), good_.profile));
        all_differ = false;
        continue;
      }
      const bool lower_is_better = better_of(row) == Better::Lower;
      const auto check = analysis::check_endpoints(g->second, b->second, lower_is_better, alpha_);
      if (!check.valid) {
        log(fmt::format("endpoints: row {}: {}", row.name(), check.reason));
        all_differ = false;
        continue;
      }
      log(fmt::format("endpoints: row {}: bad vs good {:+.2f}% ({:.0f}% interval of the change {:+.2f}% .. {:+.2f}%): {}",
                      row.name(), check.change_pct, (1 - alpha_) * 100, std::expm1(check.low) * 100,
                      std::expm1(check.high) * 100,
                      check.differs ? "a regression" : "not a regression at this level"));
      if (!check.differs) all_differ = false;
    }
    if (!all_differ) {
      log("endpoints: bad does not differ from good in every row; nothing to bisect (more sessions: --sessions)");
    }
    return all_differ;
  }

  Better better_of(const RowKey& row) {
    if (!betters_.count(row.name())) {
      store::SampleQuery query;
      query.swprofiles = {good_.profile};
      query.benchmark_glob = row.benchmark;
      for (const auto& sample : store_->samples(query)) {
        betters_[RowKey{sample.benchmark, sample.result_class.label()}.name()] = sample.result_class.better;
      }
    }
    const auto it = betters_.find(row.name());
    return it == betters_.end() ? Better::Lower : it->second;
  }

  std::vector<analysis::RowPosition> positions(const Commit& commit) {
    const auto means = session_means(commit);
    std::vector<analysis::RowPosition> out;
    for (const auto& row : rows_) {
      const auto c = means.find(row);
      const std::vector<double> none;
      out.push_back(analysis::classify_row(good_means_.at(row), bad_means_.at(row),
                                           c == means.end() ? none : c->second, alpha_, looks_));
    }
    return out;
  }

  analysis::BisectDecision measure_and_classify(Commit& commit, int step) {
    const std::string head = step > 0 ? fmt::format("step {}: ", step) : "";
    analysis::CommitClassification verdict;
    std::vector<analysis::RowPosition> rows;
    std::vector<std::string> names;
    for (const auto& row : rows_) names.push_back(row.name());
    while (true) {
      if (static_cast<int>(commit.sessions.size()) < first_sessions_) {
        if (!measure_session(commit)) break;
        continue;
      }
      rows = positions(commit);
      verdict = analysis::classify_commit(rows, names);
      if (verdict.decision != analysis::BisectDecision::Unsettled) break;
      if (static_cast<int>(commit.sessions.size()) >= max_sessions_) {
        verdict.decision = analysis::BisectDecision::Skip;
        verdict.why = fmt::format("still {} after {} sessions (--max-sessions)", verdict.why, commit.sessions.size());
        break;
      }
      if (!measure_session(commit)) break;
    }
    if (!commit.failure.empty()) {
      verdict.decision = analysis::BisectDecision::Skip;
      verdict.why = commit.failure;
    }
    log(fmt::format("{}{} \"{}\": build {}, boots {}, sessions {}", head, short_sha(commit.sha), commit.subject,
                    commit.build.empty() ? "-" : commit.build, commit.boots, commit.sessions.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      if (!r.valid) {
        log(fmt::format("  {}: {}", names[i], r.reason));
        continue;
      }
      log(fmt::format("  {}: position {:+.4f} [{:+.4f}, {:+.4f}] ({:.0f}% of the way to bad, {:.0f}% .. {:.0f}%): {}",
                      names[i], r.position, r.low, r.high, whole_percent(r.fraction), whole_percent(r.fraction_low),
                      whole_percent(r.fraction_high), analysis::to_string(r.side)));
    }
    log(fmt::format("  -> {}: {}", analysis::to_string(verdict.decision), verdict.why));
    last_why_ = verdict.why;
    return verdict.decision;
  }

  static std::optional<std::string> first_bad_commit(const std::string& output) {
    const auto at = output.find(" is the first bad commit");
    if (at == std::string::npos) return std::nullopt;
    const auto line_start = output.rfind('\n', at);
    return output.substr(line_start == std::string::npos ? 0 : line_start + 1,
                         at - (line_start == std::string::npos ? 0 : line_start + 1));
  }

  std::string describe_distribution(const std::vector<double>& means) {
    const auto s = stats::summarize(means);
    return fmt::format("mean {:.6g}, 95% CI {:.6g} .. {:.6g}, {} sessions", s.mean, s.ci95_low, s.ci95_high, s.count);
  }

  int report(const std::string& first_bad) {
    Commit& commit = candidate(first_bad);
    const std::string parent_sha = git(source_, {"rev-parse", first_bad + "^"});
    const Commit* parent = parent_sha == good_.sha ? &good_ : nullptr;
    if (const auto it = commits_.find(parent_sha); it != commits_.end()) parent = &it->second;
    std::ostringstream out;
    out << fmt::format("first bad commit: {} {}\n", commit.sha, commit.subject);
    const auto mine = session_means(commit);
    const auto parents = parent ? session_means(*parent) : std::map<RowKey, std::vector<double>>{};
    for (const auto& row : rows_) {
      out << fmt::format("  {}\n", row.name());
      const auto m = mine.find(row);
      if (m != mine.end()) out << fmt::format("    this commit   {}: {}\n", short_sha(commit.sha), describe_distribution(m->second));
      if (parent) {
        const auto p = parents.find(row);
        if (p != parents.end()) {
          out << fmt::format("    parent (good) {}: {}", short_sha(parent->sha), describe_distribution(p->second));
          if (m != mine.end()) {
            out << fmt::format("; this commit vs parent {:+.2f}%",
                               (stats::summarize(m->second).mean / stats::summarize(p->second).mean - 1) * 100);
          }
          out << "\n";
        }
      } else {
        out << fmt::format("    parent {}: not measured (git bisect inferred it good)\n", short_sha(parent_sha));
      }
      out << fmt::format("    bad endpoint  {}: {}", short_sha(bad_.sha), describe_distribution(bad_means_.at(row)));
      if (m != mine.end()) {
        out << fmt::format("; bad vs this commit {:+.2f}%",
                           (stats::summarize(bad_means_.at(row)).mean / stats::summarize(m->second).mean - 1) * 100);
      }
      out << "\n";
    }
    std::cout << out.str() << "\nstep log:\n" << text_.str();
    // The stored log ends with the evidence too.
    text_ << "\n" << out.str();
    return finish(kExitOk);
  }

  const BisectOptions& options_;
  plan::Plan plan_;
  std::string source_;
  int first_sessions_ = 3;
  int max_sessions_ = 12;
  int looks_ = 10;
  double alpha_ = 0.01;
  std::vector<RowKey> rows_;
  Commit good_, bad_;
  std::map<std::string, Commit> commits_;
  std::map<RowKey, std::vector<double>> good_means_, bad_means_;
  std::map<std::string, Better> betters_;
  std::unique_ptr<sut::Connection> local_;
  std::unique_ptr<sut::Connection> shared_connection_;
  std::map<std::string, std::unique_ptr<sut::Connection>> connections_;
  bool per_profile_connection_ = false;
  bool local_sut_ = false;
  std::vector<runner::BenchmarkRun> runs_;
  build::BuildOptions build_options_;
  bool build_incremental_ = false;
  std::string store_url_;
  std::unique_ptr<store::ResultStore> store_;
  std::function<std::string(const std::string&)> tree_for_;
  std::map<std::string, std::unique_ptr<OwnedWorktree>> endpoint_trees_;
  std::string head_sha_;
  std::string last_why_;
  std::ostringstream text_;
};

void add_common_options(CLI::App& cmd, BisectOptions& options) {
  cmd.add_option("plan", options.plan_path, "YAML plan with one swprofile whose build: source is a git tree")->required();
  cmd.add_option("--good", options.good, "a commit (any git revision) without the regression")->required();
  cmd.add_option("--bad", options.bad, "a later commit with it")->required();
  cmd.add_option("--row", options.rows,
                 "BENCH:CLASS to classify by, e.g. 'syscall/getppid:mean (ns)' (repeatable); default: the rows "
                 "compare marks (R) between the endpoints");
  cmd.add_option("--sessions", options.sessions, "first sessions per commit (>= 2, default 3)");
  cmd.add_option("--max-sessions", options.max_sessions,
                 "sessions per commit at most before it is skipped as unsettled (default 12)");
  cmd.add_option("--alpha", options.alpha,
                 "error rate of a classification (default 0.01); each look tests at alpha / looks");
  cmd.add_option("--build-cache", options.build_cache, "kernel build cache (default $KBENCH_BUILD_CACHE, else "
                                                       "~/.cache/kbench/kernels)");
  add_execution_options(cmd, options.cpus, options.strict, options.store_url);
}

}  // namespace

void add_bisect_command(CLI::App& app) {
  auto options = std::make_shared<BisectOptions>();
  CLI::App* cmd = app.add_subcommand("bisect", "Find the commit that caused a regression, under noise");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  kbench bisect run bisect.yaml --good v6.1 --bad HEAD\n"
      "  kbench bisect run bisect.yaml --good v6.1 --bad HEAD --row 'syscall/getppid:mean (ns)' --alpha 0.05\n"
      "  cd linux && git bisect start HEAD v6.1 && git bisect run kbench bisect step ../bisect.yaml --good v6.1 --bad HEAD\n"
      "Each commit is built (build: of the plan's one swprofile, ref set to the commit; stored as swprofile\n"
      "bisect-<12 hex>), booted and measured, and classified against the endpoints' sessions: more sessions\n"
      "until settled, a skip after --max-sessions (docs/bisect.md).");

  CLI::App* run = cmd->add_subcommand("run", "Measure both endpoints, check they differ, then drive git bisect");
  add_common_options(*run, *options);
  run->footer(
      "git bisect runs in a worktree kbench owns (git worktree add --detach), never in your checkout.\n"
      "Prints the first bad commit with its evidence and the step log; the log is stored\n"
      "(kbench log list --kind bisect). Exit 0: found; 1: endpoints do not differ, or only skipped\n"
      "commits are left; 2: bad input.");
  run->callback([options] { pending_exit_status() = Bisector(*options).run(); });

  CLI::App* step = cmd->add_subcommand("step", "Classify HEAD of the source tree, for git bisect run");
  add_common_options(*step, *options);
  step->footer(
      "Measures HEAD of the plan's build source (the commit git bisect checked out), reads the endpoints'\n"
      "sessions from the store (measuring those missing). Exit 0 good, 1 bad, 125 skip (why on stderr);\n"
      "128 on an error or when the endpoints do not differ, which stops git bisect run.");
  step->callback([options] {
    try {
      pending_exit_status() = Bisector(*options).step();
    } catch (const std::exception& e) {
      // Exit 1 or 2 would read as "bad" to git bisect run: stop it instead.
      std::cerr << "kbench: " << e.what() << "\n";
      pending_exit_status() = 128;
    }
  });
}

}  // namespace kbench::cli
