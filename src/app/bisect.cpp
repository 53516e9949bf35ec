#include "app/bisect.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/bisect.h"
#include "analysis/bisect_confirmation.h"
#include "analysis/compare.h"
#include "analysis/kernel_profile.h"
#include "analysis/row_identity.h"
#include "app/option_values.h"
#include "app/store_access.h"
#include "build/kernel_build.h"
#include "common/errors.h"
#include "common/params.h"
#include "plan/plan.h"
#include "process/git.h"
#include "report/format.h"
#include "report/kernel_time.h"
#include "runner/catalogue.h"
#include "runner/interrupt.h"
#include "runner/plan_executor.h"
#include "runner/progress.h"
#include "runner/session_boots.h"
#include "stats/stats.h"
#include "sut/method.h"

namespace kbench::app {

namespace {

namespace fs = std::filesystem;
using analysis::RowIdentity;

RowSelector parse_row(const std::string& text) {
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

std::string resolve_commit(const std::string& tree, const std::string& rev, const std::string& option) {
  const auto sha = process::try_git_output(tree, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (!sha) throw InputError(option + " " + rev + ": expected a commit of " + tree);
  return *sha;
}

std::string subject_of(const std::string& tree, const std::string& sha) {
  return process::git_output(tree, {"log", "-1", "--format=%s", sha});
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

// A fraction as whole percent for the log; rounding to zero from below would
// print "-0".
double whole_percent(double fraction) {
  const double percent = std::round(fraction * 100);
  return percent == 0 ? 0.0 : percent;
}

}  // namespace

// Bisector::Search, declared in the header, holds these: a type of internal
// linkage inside it would give the class a different meaning in every unit.
namespace bisect_parts {

// A worktree of the source owned by kbench (git bisect checks out commits in
// it; the user's checkout is never touched), removed when done.
class OwnedWorktree {
 public:
  OwnedWorktree(std::string source, const std::string& commit) : source_(std::move(source)) {
    std::string pattern = (fs::temp_directory_path() / "kbench-bisect-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw RunError("cannot create a temporary directory for the bisect worktree");
    dir_ = pattern;
    fs::remove(dir_);
    process::git_output(source_, {"worktree", "add", "--detach", "--quiet", dir_, commit});
  }
  ~OwnedWorktree() {
    process::run_git(dir_, {"bisect", "reset"});
    process::run_git(source_, {"worktree", "remove", "--force", dir_});
  }
  OwnedWorktree(const OwnedWorktree&) = delete;
  OwnedWorktree& operator=(const OwnedWorktree&) = delete;
  const std::string& dir() const { return dir_; }
  void checkout(const std::string& commit) {
    if (process::git_output(dir_, {"rev-parse", "HEAD"}) != commit) {
      process::git_output(dir_, {"checkout", "--detach", "--quiet", commit});
    }
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

// One step of the search, for the report: how it was decided.
struct StepRecord {
  int step = 0;
  std::string sha;
  std::string subject;
  analysis::BisectDecision decision = analysis::BisectDecision::Skip;
  std::size_t sessions = 0;
  std::string confidence;          // the look that settled it, and each look's level
  std::vector<std::string> rows;   // per row: where it lies on the way to bad, with its interval
};

}  // namespace bisect_parts

using bisect_parts::Commit;
using bisect_parts::OwnedWorktree;
using bisect_parts::StepRecord;

BisectRequest parse_bisect_request(const BisectArguments& arguments) {
  BisectRequest request;
  request.plan_path = arguments.plan_path;
  request.plan = plan::load_plan(arguments.plan_path);
  const plan::Plan& plan = request.plan;
  if (plan.swprofiles.size() != 1 || !plan.swprofiles.front().build) {
    throw InputError(arguments.plan_path + ": expected exactly one swprofile, with build: (a git tree)");
  }
  if (!plan.suts.empty()) throw InputError(arguments.plan_path + ": expected one sut:, not a suts: list");
  // Each boot of this machine ends the kbench that started it; a bisect's
  // state (the commits decided, git bisect's) does not survive that.
  if (plan::boots_this_machine(plan)) {
    throw InputError(arguments.plan_path + ": sut.boot: expected a SUT kbench reaches over ssh (a bisect cannot "
                     "boot the machine it runs on)");
  }
  request.source = plan.swprofiles.front().build->source;
  const auto inside = process::run_git(request.source, {"rev-parse", "--is-inside-work-tree"});
  if (inside.exit_status != 0) {
    throw InputError(arguments.plan_path + ": build source " + request.source + ": expected a git tree");
  }
  request.first_sessions = parse_integer("--sessions", arguments.sessions, 2, plan::kMaxSessions);
  request.max_sessions = parse_integer("--max-sessions", arguments.max_sessions, 2, plan::kMaxSessions);
  if (request.max_sessions < request.first_sessions) {
    throw InputError("--max-sessions " + arguments.max_sessions + ": expected at least --sessions (" +
                     arguments.sessions + ")");
  }
  request.confirm_sessions = parse_integer("--confirm-sessions", arguments.confirm_sessions, 0, plan::kMaxSessions);
  // compare's session test needs two sessions a side.
  if (request.confirm_sessions == 1) {
    throw InputError("--confirm-sessions '1': expected 0 (no confirmation) or a whole number from 2 to " +
                     std::to_string(plan::kMaxSessions));
  }
  request.confirm_max_sessions =
      arguments.confirm_max_sessions.empty()
          ? std::min(request.confirm_sessions + kMoreConfirmSessions, plan::kMaxSessions)
          : parse_integer("--confirm-max-sessions", arguments.confirm_max_sessions, 2, plan::kMaxSessions);
  if (request.confirm_max_sessions < request.confirm_sessions) {
    throw InputError("--confirm-max-sessions " + arguments.confirm_max_sessions +
                     ": expected at least --confirm-sessions (" + arguments.confirm_sessions + ")");
  }
  request.time_functions =
      parse_integer("--time-functions", arguments.time_functions, 0, static_cast<int>(analysis::kKernelTimeShiftFunctions));
  request.alpha = parse_decimal("--alpha", arguments.alpha, 0);
  if (!(request.alpha > 0 && request.alpha < 1)) {
    throw InputError("--alpha " + arguments.alpha + ": expected a level in (0, 1)");
  }
  for (const auto& row : arguments.rows) request.rows.push_back(parse_row(row));
  request.good = arguments.good;
  request.bad = arguments.bad;
  request.good_sha = resolve_commit(request.source, arguments.good, "--good");
  request.bad_sha = resolve_commit(request.source, arguments.bad, "--bad");
  if (request.good_sha == request.bad_sha) throw InputError("--good and --bad: expected two different commits");
  request.store_url = arguments.store_url;
  request.build_cache = arguments.build_cache;
  request.cpus = arguments.cpus;
  request.strict = arguments.strict;
  return request;
}

std::map<analysis::RowIdentity, std::vector<double>> session_means_by_row(const std::vector<store::SampleRow>& samples,
                                                                          const std::set<std::int64_t>& sessions) {
  std::map<analysis::RowIdentity, std::map<std::int64_t, std::vector<double>>> by_row;
  for (const auto& sample : samples) {
    if (!sessions.count(sample.session)) continue;
    by_row[analysis::row_identity(sample)][sample.session].push_back(sample.value);
  }
  std::map<analysis::RowIdentity, std::vector<double>> means;
  for (const auto& [row, by_session] : by_row) {
    std::vector<std::vector<double>> groups;
    for (const auto& [id, values] : by_session) groups.push_back(values);
    means[row] = stats::session_means(groups);
  }
  return means;
}

std::vector<analysis::RowIdentity> select_rows(const std::vector<RowSelector>& selectors,
                                               const std::map<analysis::RowIdentity, std::vector<double>>& measured) {
  std::vector<analysis::RowIdentity> rows;
  for (const RowSelector& selector : selectors) {
    const std::size_t before = rows.size();
    for (const auto& [row, means] : measured) {
      if (row.benchmark == selector.benchmark && row.label == selector.label) rows.push_back(row);
    }
    if (rows.size() == before) rows.push_back({selector.benchmark, "", selector.label});
  }
  return rows;
}

class Bisector::Search {
 public:
  Search(const BisectRequest& request, ConnectSut connect)
      : request_(request),
        connect_(std::move(connect)),
        plan_(request.plan),
        source_(request.source),
        first_sessions_(request.first_sessions),
        max_sessions_(request.max_sessions),
        alpha_(request.alpha) {
    for (Commit* c : {&good_, &bad_}) init_commit(*c, c == &good_ ? request.good_sha : request.bad_sha);
    const sut::Method& method = plan::sut_method(plan_);
    if (plan_.sut && method.has(sut::Capability::BootsKernel)) per_profile_connection_ = true;
    deploys_ = plan_.sut && plan_.sut->boot;
    local_sut_ = method.has(sut::Capability::OnController);
    local_ = sut::make_local_connection(sut::find_agent_binary());
    catalogue_ = runner::fetch_catalogue(*local_);
    runs_ = runner::resolve_benchmarks(plan_, catalogue_);
    for (auto& run : runs_) run.settings.sessions = 1;
    if (plan_.sut && !per_profile_connection_) shared_connection_ = connect_(*plan_.sut, nullptr);
    build_options_.cache_dir = request.build_cache;
    build_options_.progress = [this](const std::string& line) {
      if (line.find("(incremental") != std::string::npos) build_incremental_ = true;
      std::cerr << "kbench: " << line << "\n";
    };
    store_url_ = resolve_store_url(request.store_url);
    store_ = store::open_store(store_url_, store::OpenMode::CreateIfMissing);
    runner::install_interrupt_handlers();
    looks_ = max_sessions_ - first_sessions_ + 1;
  }

  // `body`, then (however it ends) the SUT back on its own kernel.
  template <typename Body>
  int leaving_sut(Body body) {
    int status = 0;
    try {
      status = body();
    } catch (...) {
      try {
        leave_sut();
      } catch (const std::exception& error) {
        std::cerr << "kbench: warning: the SUT could not be booted back into its own kernel: " << error.what() << "\n";
      }
      throw;
    }
    leave_sut();
    return status;
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
                    short_sha(good_.sha), request_.good, short_sha(bad_.sha), request_.bad, request_.plan_path,
                    request_.rows.empty() ? "those marked (R) between the endpoints" : selector_names(), first_sessions_,
                    max_sessions_, alpha_, alpha_ / looks_, looks_));
    if (local_sut_) log("the plan's SUT is local: kernels are built but not booted, the running kernel is measured");
    measure_endpoints();
    if (!endpoints_differ()) return finish(kExitFailure);

    const auto started = process::run_git(worktree.dir(), {"bisect", "start", bad_.sha, good_.sha});
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
      const std::string head = process::git_output(worktree.dir(), {"rev-parse", "HEAD"});
      Commit& commit = candidate(head);
      const auto decision = measure_and_classify(commit, ++step);
      const std::string verb = decision == analysis::BisectDecision::Good  ? "good"
                               : decision == analysis::BisectDecision::Bad ? "bad"
                                                                            : "skip";
      const auto answer = process::run_git(worktree.dir(), {"bisect", verb, head});
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
    head_sha_ = process::git_output(source_, {"rev-parse", "HEAD"});
    // The endpoints' sessions already in the store (earlier steps) count.
    for (Commit* c : {&good_, &bad_}) c->sessions = stored_sessions(c->profile);
    if (static_cast<int>(good_.sessions.size()) < first_sessions_ ||
        static_cast<int>(bad_.sessions.size()) < first_sessions_) {
      measure_endpoints();
    }
    endpoint_trees_.clear();
    if (!endpoints_differ()) return 128;  // git bisect run stops on > 127
    Commit& commit = candidate(head_sha_);
    if (commit.sha == good_.sha) return 0;
    if (commit.sha == bad_.sha) return 1;
    commit.sessions = stored_sessions(commit.profile);
    const auto decision = measure_and_classify(commit, 0);
    store_->add_log("bisect", request_.good + ".." + request_.bad, text_.str());
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

  // sut.boot on an ssh SUT: back into the kernel it ran before the first
  // boot, once. Not after an interrupt: whoever stopped kbench may want the
  // SUT as it is, and plan exec leaves it so too.
  void leave_sut() {
    if (!deploys_ || !sut_original_ || !shared_connection_) return;
    if (runner::interrupted()) {
      std::cerr << fmt::format("kbench: interrupted: {} still runs the kernel of the last boot, not its own {}\n",
                               shared_connection_->describe(), sut_original_->release);
      return;
    }
    runner::Progress progress(stderr, false, 0);
    const auto back = runner::boot_sut_back(plan_, *shared_connection_, *sut_original_, progress);
    if (back && !back->ok) {
      std::cerr << "kbench: warning: the SUT is not back on its own kernel: " << back->reason << "\n";
    }
  }

  void log(const std::string& line) {
    text_ << line << "\n";
    std::cerr << line << "\n";
  }

  int finish(int status) {
    store_->add_log("bisect", request_.good + ".." + request_.bad, text_.str());
    return status;
  }

  // Builds the commit's kernel (once) and measures one session of it: the
  // plan's benchmarks, or `runs` when given.
  bool measure_session(Commit& commit, const std::vector<runner::BenchmarkRun>* runs = nullptr) {
    const std::vector<runner::BenchmarkRun>& measured = runs ? *runs : runs_;
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
      if (per_profile_connection_) connections_[spec.name] = connect_(*plan_.sut, &spec);
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
    exec.cpus = request_.cpus;
    exec.strict = request_.strict;
    exec.plan_key = "kbench bisect " + fs::absolute(request_.plan_path).lexically_normal().string();
    // A session is a boot into the commit's kernel; the SUT stays in it until
    // the next session's boot, and goes back to its own kernel once, at the
    // end (leave_sut).
    exec.boot_back = !deploys_;
    exec.sut_original = sut_original_;
    runner::Progress progress(stderr, isatty(STDERR_FILENO) == 1, static_cast<int>(measured.size()));
    const runner::ConnectionFor connection_for = [&](const plan::SwprofileSpec& profile) -> sut::Connection& {
      if (per_profile_connection_) return *connections_.at(profile.name);
      if (shared_connection_) return *shared_connection_;
      return *local_;
    };
    const runner::ExecResult result = runner::execute_plan(one, measured, connection_for, *store_, exec, progress);
    if (result.interrupted_by != 0) {
      throw RunError(fmt::format("interrupted by signal {}", result.interrupted_by));
    }
    if (!sut_original_) sut_original_ = result.sut_original;
    for (const auto& session : result.sessions) {
      commit.sessions.push_back(session.session);
      if (per_profile_connection_) commit.boots += static_cast<int>(session.outcomes.size());
      if (deploys_) ++commit.boots;
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
  std::map<RowIdentity, std::vector<double>> session_means(const Commit& commit) {
    store::SampleQuery query;
    query.swprofiles = {commit.profile};
    query.settled_only = true;
    return session_means_by_row(store_->samples(query), {commit.sessions.begin(), commit.sessions.end()});
  }

  void measure_endpoints() {
    // Alternating, so drift falls on both.
    while ((static_cast<int>(good_.sessions.size()) < first_sessions_ ||
            static_cast<int>(bad_.sessions.size()) < first_sessions_)) {
      for (Commit* c : {&good_, &bad_}) {
        if (static_cast<int>(c->sessions.size()) < first_sessions_) measure_endpoint_session(*c);
      }
    }
    for (const Commit* c : {&good_, &bad_}) {
      log(fmt::format("endpoint {} {} \"{}\": build {}, boots {}, sessions {}", c == &good_ ? "good" : "bad",
                      short_sha(c->sha), c->subject, c->build.empty() ? "-" : c->build, c->boots, c->sessions.size()));
    }
  }

  bool endpoints_can_grow() const {
    return static_cast<int>(good_.sessions.size()) < max_sessions_ &&
           static_cast<int>(bad_.sessions.size()) < max_sessions_;
  }

  // A bisect cannot go on without both endpoints.
  void measure_endpoint_session(Commit& endpoint) {
    if (measure_session(endpoint)) return;
    log(fmt::format("endpoint {} {}: {}", short_sha(endpoint.sha), endpoint.subject, endpoint.failure));
    throw RunError(fmt::format("the {} endpoint {} cannot be measured: {}", &endpoint == &good_ ? "good" : "bad",
                               short_sha(endpoint.sha), endpoint.failure));
  }

  // One more session of good, then of bad.
  void measure_endpoint_pair(const std::string& head, const std::string& why) {
    for (Commit* c : {&good_, &bad_}) measure_endpoint_session(*c);
    good_means_ = session_means(good_);
    bad_means_ = session_means(bad_);
    log(fmt::format("{}endpoints: one more session each (now {} good, {} bad): {}", head, good_.sessions.size(),
                    bad_.sessions.size(), why));
  }

  // "BENCH:CLASS", as --row names it; with " [params]" after BENCH only when
  // another row is the same benchmark and class at other parameters.
  std::string row_name(const RowIdentity& row) const {
    const bool ambiguous = std::any_of(rows_.begin(), rows_.end(), [&](const RowIdentity& other) {
      return other.benchmark == row.benchmark && other.label == row.label && other.params != row.params;
    });
    return row.benchmark + (ambiguous ? " [" + row.params + "]" : "") + ":" + row.label;
  }

  std::string selector_names() const {
    std::vector<std::string> names;
    for (const auto& row : request_.rows) names.push_back(row.benchmark + ":" + row.label);
    return fmt::format("{}", fmt::join(names, ", "));
  }

  std::string row_names() const {
    std::vector<std::string> names;
    for (const auto& row : rows_) names.push_back(row_name(row));
    return fmt::format("{}", fmt::join(names, ", "));
  }

  // Bad must differ from good before bisecting. With --row the check is
  // sequential, as a step is: while some row's interval still includes no
  // change, one more session of each endpoint, looks_ looks at most, each at
  // alpha / looks_. Without --row the rows are those compare marks (R), at
  // its own level, once.
  bool endpoints_differ() {
    if (request_.rows.empty()) return check_endpoints(alpha_);
    for (int look = 1;; ++look) {
      if (check_endpoints(alpha_ / looks_)) return true;
      if (look >= looks_ || !endpoints_can_grow() || endpoint_row_invalid_) break;
      measure_endpoint_pair("", "bad does not differ from good yet");
    }
    log(fmt::format("endpoints: bad does not differ from good in every row after {} sessions of each; nothing to "
                    "bisect (more sessions: --max-sessions)",
                    std::min(good_.sessions.size(), bad_.sessions.size())));
    return false;
  }

  // One look at the endpoints, each row's interval at two-sided 1 - level.
  bool check_endpoints(double level) {
    good_means_ = session_means(good_);
    bad_means_ = session_means(bad_);
    rows_.clear();
    if (!request_.rows.empty()) {
      std::map<RowIdentity, std::vector<double>> measured = good_means_;
      measured.insert(bad_means_.begin(), bad_means_.end());
      rows_ = select_rows(request_.rows, measured);
    } else {
      const analysis::Report report = compare_sessions(good_, bad_, nullptr, alpha_);
      for (const auto& table : report.tables)
        for (const auto& row : table.rows)
          if (!row.cells.empty() && row.cells.front().verdict == analysis::Verdict::Regression)
            rows_.push_back(analysis::row_identity(row));
      if (rows_.empty()) {
        log(fmt::format("endpoints: no row of {} vs {} is marked (R) at false discovery rate {} "
                        "(kbench compare {} {} shows the table); nothing to bisect",
                        short_sha(bad_.sha), short_sha(good_.sha), alpha_, good_.profile, bad_.profile));
        return false;
      }
      log("endpoints: rows marked (R) by compare: " + row_names());
    }
    bool all_differ = true;
    endpoint_row_invalid_ = false;  // a row more sessions cannot help
    for (const auto& row : rows_) {
      const auto g = good_means_.find(row);
      const auto b = bad_means_.find(row);
      if (g == good_means_.end() || b == bad_means_.end()) {
        log(fmt::format("endpoints: row {}: not measured on both endpoints (the plan's benchmarks and their result "
                        "classes: kbench show {})", row_name(row), good_.profile));
        all_differ = false;
        endpoint_row_invalid_ = true;
        continue;
      }
      const bool lower_is_better = better_of(row) == Better::Lower;
      const auto check = analysis::check_endpoints(g->second, b->second, lower_is_better, level);
      if (!check.valid) {
        log(fmt::format("endpoints: row {}: {}", row_name(row), check.reason));
        all_differ = false;
        endpoint_row_invalid_ = true;
        continue;
      }
      log(fmt::format("endpoints: row {}: bad vs good {:+.2f}% ({:.4g}% interval of the change {:+.2f}% .. {:+.2f}%): {}",
                      row_name(row), check.change_pct, (1 - level) * 100, std::expm1(check.low) * 100,
                      std::expm1(check.high) * 100,
                      check.differs ? "a regression" : "not a regression at this level"));
      if (!check.differs) all_differ = false;
    }
    if (!all_differ && request_.rows.empty()) {
      log("endpoints: bad does not differ from good in every row; nothing to bisect (more sessions: --sessions)");
    }
    return all_differ;
  }

  // compare's three-valued verdicts (its session test at false discovery
  // rate `fdr`) of `test` against `base`, on the sessions each used, only
  // the rows in `only` when given (the family the rate is controlled over).
  analysis::Report compare_sessions(const Commit& base, const Commit& test, const std::vector<RowIdentity>* only,
                                    double fdr) {
    store::SampleQuery query;
    query.swprofiles = {base.profile, test.profile};
    query.settled_only = true;
    std::set<std::int64_t> used(base.sessions.begin(), base.sessions.end());
    used.insert(test.sessions.begin(), test.sessions.end());
    const std::set<RowIdentity> wanted = only ? std::set<RowIdentity>(only->begin(), only->end()) : std::set<RowIdentity>{};
    std::vector<store::SampleRow> samples;
    for (auto& row : store_->samples(query)) {
      if (!used.count(row.session)) continue;
      if (only && !wanted.count(analysis::row_identity(row))) continue;
      samples.push_back(std::move(row));
    }
    analysis::CompareOptions compare;
    compare.base = base.profile;
    compare.tests = {test.profile};
    compare.fdr = fdr;
    return analysis::build_comparison(samples, compare);
  }

  // Which way is better is the result class's, whatever the parameters.
  Better better_of(const RowIdentity& row) {
    const auto class_key = [](const std::string& benchmark, const std::string& label) {
      return benchmark + ":" + label;
    };
    if (!betters_.count(class_key(row.benchmark, row.label))) {
      store::SampleQuery query;
      query.swprofiles = {good_.profile};
      query.benchmark_glob = row.benchmark;
      for (const auto& sample : store_->samples(query)) {
        betters_[class_key(sample.benchmark, sample.result_class.label())] = sample.result_class.better;
      }
    }
    const auto it = betters_.find(class_key(row.benchmark, row.label));
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
    for (const auto& row : rows_) names.push_back(row_name(row));
    int looks = 0;
    bool hit_max = false;
    while (true) {
      if (static_cast<int>(commit.sessions.size()) < first_sessions_) {
        if (!measure_session(commit)) break;
        continue;
      }
      rows = positions(commit);
      ++looks;
      verdict = analysis::classify_commit(rows, names);
      if (verdict.decision != analysis::BisectDecision::Unsettled) break;
      // Every look tests at alpha / looks_, so a commit gets looks_ looks at
      // most, however its sessions and the endpoints' grew between them.
      if (static_cast<int>(commit.sessions.size()) >= max_sessions_ || looks >= looks_) {
        verdict.decision = analysis::BisectDecision::Skip;
        verdict.why = fmt::format("still {} after {} sessions (--max-sessions)", verdict.why, commit.sessions.size());
        hit_max = true;
        break;
      }
      if (analysis::next_session(rows) == analysis::NextSession::Endpoints && endpoints_can_grow()) {
        measure_endpoint_pair(head, "they left more of the interval than the commit");
        continue;
      }
      if (!measure_session(commit)) break;
    }
    if (!commit.failure.empty()) {
      verdict.decision = analysis::BisectDecision::Skip;
      verdict.why = commit.failure;
      looks = 0;
    }
    log(fmt::format("{}{} \"{}\": build {}, boots {}, sessions {}", head, short_sha(commit.sha), commit.subject,
                    commit.build.empty() ? "-" : commit.build, commit.boots, commit.sessions.size()));
    StepRecord record{step, commit.sha, commit.subject, verdict.decision, commit.sessions.size(), {}, {}};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      if (!r.valid) {
        log(fmt::format("  {}: {}", names[i], r.reason));
        record.rows.push_back(fmt::format("{}: {}", names[i], r.reason));
        continue;
      }
      log(fmt::format("  {}: position {:+.4f} [{:+.4f}, {:+.4f}] ({:.0f}% of the way to bad, {:.0f}% .. {:.0f}%): {}",
                      names[i], r.position, r.low, r.high, whole_percent(r.fraction), whole_percent(r.fraction_low),
                      whole_percent(r.fraction_high), analysis::to_string(r.side)));
      record.rows.push_back(fmt::format("{}: {:.0f}% of the way to bad ({:.0f}% .. {:.0f}%)", names[i],
                                        whole_percent(r.fraction), whole_percent(r.fraction_low),
                                        whole_percent(r.fraction_high)));
    }
    record.confidence = confidence(verdict.decision, looks, hit_max);
    log(fmt::format("  -> {}: {}; {}", analysis::to_string(verdict.decision), verdict.why, record.confidence));
    last_why_ = verdict.why;
    if (step > 0) steps_.push_back(std::move(record));
    return verdict.decision;
  }

  // How a step was decided: the look that settled it (or that it never
  // settled), each look's interval level.
  std::string confidence(analysis::BisectDecision decision, int looks, bool hit_max) const {
    if (looks == 0) return "no look: not measured";
    const double level = alpha_ / looks_;
    const std::string each = fmt::format("each look a {:.4g}% interval (alpha' {:.3g})", (1 - level) * 100, level);
    const bool settled = decision == analysis::BisectDecision::Good || decision == analysis::BisectDecision::Bad;
    if (settled) return fmt::format("settled at look {} of {}, {}", looks, looks_, each);
    if (hit_max) return fmt::format("not settled in {} looks of {} (--max-sessions), {}", looks, looks_, each);
    return fmt::format("at look {} of {}, {}", looks, looks_, each);
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

  // The A/B/A sandwich's outcome: per row compare's verdict of the culprit
  // against its parent on the sandwich's sessions alone.
  struct Sandwich {
    bool measured = false;
    analysis::SandwichVerdict verdict;
    std::map<RowIdentity, std::string> evidence;
    std::size_t parent_sessions = 0;
    std::size_t culprit_sessions = 0;
    int looks = 0;       // taken
    int max_looks = 0;   // --confirm-max-sessions - --confirm-sessions + 1
    double level = 0;    // each look's false discovery rate: alpha / max_looks
    // Where the culprit's kernel time went, from the sandwich's kernel
    // profiles (plan kernel_profile: true); empty without them.
    std::vector<std::string> kernel_time;
    // The kfunc/ timings of the functions those profiles point at.
    std::vector<std::string> function_times;
  };

  // Fresh sessions P C P C ... P, each a boot of its own: the parent's
  // surround the culprit's, so a drift linear in time weighs the same on
  // both. Stored under swprofiles of their own (bisect-confirm-<12 hex>),
  // apart from the search's sessions, which chose the culprit and would
  // confirm their own choice. While its rows are only undecided it grows by
  // C P and looks again, up to --confirm-max-sessions: every look at
  // alpha / looks, so that however many it takes, a culprit that did not
  // change the rows is confirmed at rate alpha at most.
  Sandwich sandwich(const std::string& culprit_sha, const std::string& parent_sha) {
    Sandwich result;
    Commit parent, culprit;
    init_commit(parent, parent_sha);
    init_commit(culprit, culprit_sha);
    parent.profile = "bisect-confirm-" + short_sha(parent_sha);
    culprit.profile = "bisect-confirm-" + short_sha(culprit_sha);
    const int first = request_.confirm_sessions;
    result.max_looks = request_.confirm_max_sessions - first + 1;
    result.level = alpha_ / result.max_looks;
    log(fmt::format("confirmation: A/B/A sandwich of parent {} and culprit {}, alternated P C P ... P: {} sessions of "
                    "the parent, {} of the culprit, then one more of each while undecided, {} of the culprit at "
                    "most; each look at false discovery rate {:.3g} (alpha {} / {} looks) (swprofiles {}, {})",
                    short_sha(parent.sha), short_sha(culprit.sha), first + 1, first, request_.confirm_max_sessions,
                    result.level, alpha_, result.max_looks, parent.profile, culprit.profile));
    analysis::Report report;
    for (int sessions = 2 * first + 1;; sessions += 2) {
      while (static_cast<int>(parent.sessions.size() + culprit.sessions.size()) < sessions) {
        Commit& side = parent.sessions.size() > culprit.sessions.size() ? culprit : parent;
        if (!measure_session(side)) {
          result.verdict = analysis::SandwichVerdict{};
          result.verdict.why = fmt::format("the {} {} cannot be measured: {}", &side == &parent ? "parent" : "culprit",
                                           short_sha(side.sha), side.failure);
          log("confirmation: " + result.verdict.why);
          result.measured = result.looks > 0;
          return result;
        }
      }
      ++result.looks;
      result.measured = true;
      result.parent_sessions = parent.sessions.size();
      result.culprit_sessions = culprit.sessions.size();
      report = compare_sessions(parent, culprit, &rows_, result.level);
      result.verdict = judge_rows(report, result.evidence);
      log(fmt::format("confirmation: look {} of {} ({} sessions of the parent, {} of the culprit): {}", result.looks,
                      result.max_looks, result.parent_sessions, result.culprit_sessions,
                      result.verdict.confirmed ? "confirmed" : result.verdict.why));
      if (!result.verdict.more_sessions_may_decide || result.looks >= result.max_looks) break;
    }
    log(fmt::format("confirmation: parent build {}, boots {}; culprit build {}, boots {}", parent.build, parent.boots,
                    culprit.build, culprit.boots));
    std::set<std::int64_t> sandwiched(parent.sessions.begin(), parent.sessions.end());
    sandwiched.insert(culprit.sessions.begin(), culprit.sessions.end());
    analysis::add_kernel_time_shifts(report, *store_, sandwiched);
    for (const auto& table : report.tables)
      for (auto& line : report::kernel_time_lines(table)) result.kernel_time.push_back(std::move(line));
    if (result.verdict.confirmed && request_.time_functions > 0) {
      result.function_times = time_functions(parent, culprit, report);
    }
    return result;
  }

  // Every bisected row's verdict in `report` (the culprit against its
  // parent), and the evidence line of each.
  analysis::SandwichVerdict judge_rows(const analysis::Report& report, std::map<RowIdentity, std::string>& evidence) {
    std::map<RowIdentity, const analysis::Row*> compared;
    for (const auto& table : report.tables)
      for (const auto& row : table.rows) compared.try_emplace(analysis::row_identity(row), &row);
    std::vector<analysis::SandwichRow> verdicts;
    for (const auto& row : rows_) {
      analysis::SandwichRow verdict{row_name(row), analysis::Verdict::None, ""};
      const auto it = compared.find(row);
      if (it == compared.end() || it->second->cells.empty() || !it->second->cells.front().present) {
        verdict.note = "not measured on both sides";
        evidence[row] = verdict.note;
      } else {
        const analysis::Cell& cell = it->second->cells.front();
        verdict.verdict = cell.verdict;
        verdict.note = cell.note;
        evidence[row] = fmt::format(
            "culprit vs parent {:+.2f}%{}: {}{}{}", cell.change_pct,
            cell.change_ci.valid ? fmt::format(" (interval {:+.2f}% .. {:+.2f}%)", cell.change_ci.low, cell.change_ci.high)
                                 : "",
            report::verdict_name(cell.verdict),
            report::mark_suffix(cell.verdict), cell.note.empty() ? "" : " (" + cell.note + ")");
      }
      log(fmt::format("confirmation: {}: {}", verdict.name, evidence[row]));
      verdicts.push_back(std::move(verdict));
    }
    return analysis::judge_sandwich(verdicts);
  }

  // The kfunc/ rows `commit`'s sessions measured: each function's time per
  // call, the row its timing is judged by.
  std::vector<RowIdentity> time_per_call_rows(const Commit& commit) {
    store::SampleQuery query;
    query.swprofiles = {commit.profile};
    query.benchmark_glob = "kfunc/*";
    query.settled_only = true;
    const std::set<std::int64_t> used(commit.sessions.begin(), commit.sessions.end());
    std::set<RowIdentity> rows;
    for (const auto& sample : store_->samples(query)) {
      if (used.count(sample.session) && sample.result_class.label() == analysis::kKfuncTimePerCall) {
        rows.insert(analysis::row_identity(sample));
      }
    }
    return {rows.begin(), rows.end()};
  }

  // kfunc/ on the functions the sandwich's profiles point at, driven by the
  // profiled benchmark's own path, on the parent and the culprit alternated
  // P C P ... P as the sandwich, each session a boot of its own: a
  // function's share grows when another one gets slower, so only its own
  // time on both sides says which did. Under the sandwich's swprofiles: the
  // kfunc/ rows are apart from the rows it compared.
  std::vector<std::string> time_functions(const Commit& sandwich_parent, const Commit& sandwich_culprit,
                                          const analysis::Report& sandwich_report) {
    std::vector<std::string> lines;
    std::vector<std::string> without_workload;
    const auto candidates = analysis::kfunc_candidates(sandwich_report, static_cast<std::size_t>(request_.time_functions),
                                                       without_workload);
    for (const std::string& benchmark : without_workload) {
      lines.push_back(fmt::format("{}: not timed, kfunc/ has no workload that drives its path", benchmark));
    }
    if (candidates.empty()) return lines;
    plan::Plan timing = plan_;
    timing.benchmarks.clear();
    for (const auto& candidate : candidates) {
      plan::BenchmarkEntry entry;
      entry.name = candidate.benchmark;
      entry.params = {{"workload", candidate.workload}};
      entry.file = "kbench bisect";
      timing.benchmarks.push_back(std::move(entry));
    }
    std::vector<runner::BenchmarkRun> runs = runner::resolve_benchmarks(timing, catalogue_);
    for (auto& run : runs) {
      run.settings.sessions = 1;
      run.settings.kernel_profile = false;  // the sampler's interrupts would land in the traced durations
    }
    Commit parent = sandwich_parent;
    Commit culprit = sandwich_culprit;
    parent.sessions.clear();
    culprit.sessions.clear();
    std::vector<std::string> names;
    for (const auto& candidate : candidates) names.push_back(candidate.benchmark + " workload=" + candidate.workload);
    log(fmt::format("timing: {} on the parent and the culprit, alternated P C P ... P", fmt::join(names, ", ")));
    const int n = request_.confirm_sessions;
    for (int i = 0; i < 2 * n + 1; ++i) {
      Commit& side = i % 2 == 0 ? parent : culprit;
      if (!measure_session(side, &runs)) {
        lines.push_back(fmt::format("functions not timed: kfunc/ on the {} {}: {}", &side == &parent ? "parent" : "culprit",
                                    short_sha(side.sha), side.failure));
        log("timing: " + lines.back());
        return lines;
      }
      if (i == 0 && time_per_call_rows(parent).empty()) {
        lines.push_back(fmt::format("functions not timed: kfunc/ measured nothing on the parent {} (it needs "
                                    "CONFIG_FUNCTION_GRAPH_TRACER; kbench session show {} says why)",
                                    short_sha(parent.sha), parent.sessions.back()));
        log("timing: " + lines.back());
        return lines;
      }
    }
    const std::vector<RowIdentity> rows = time_per_call_rows(parent);
    const analysis::Report report = compare_sessions(parent, culprit, &rows, alpha_);
    std::size_t timed = 0, not_slower = 0;  // not slower: unchanged or improved, each decided
    for (const auto& table : report.tables) {
      for (const auto& row : table.rows) {
        if (row.cells.empty() || !row.cells.front().present) continue;
        const analysis::Cell& cell = row.cells.front();
        ++timed;
        if (cell.verdict == analysis::Verdict::Unchanged || cell.verdict == analysis::Verdict::Improvement) ++not_slower;
        lines.push_back(fmt::format(
            "{} (workload {}): {}, parent {:.1f} {}, culprit {:.1f} {}: {:+.2f}%{} {}{}{}", row.benchmark,
            row.params.count("workload") ? row.params.at("workload") : analysis::kKfuncDefaultWorkload,
            row.result_class.name, row.base.mean,
            row.result_class.unit, cell.test.mean, row.result_class.unit, cell.change_pct,
            cell.change_ci.valid ? fmt::format(" ({:+.2f}% .. {:+.2f}%)", cell.change_ci.low, cell.change_ci.high) : "",
            report::verdict_name(cell.verdict), report::mark_suffix(cell.verdict),
            cell.note.empty() ? "" : " (" + cell.note + ")"));
        log("timing: " + lines.back());
      }
    }
    lines.push_back(fmt::format("({} sessions of the parent, {} of the culprit; compare at false discovery rate {})",
                                parent.sessions.size(), culprit.sessions.size(), alpha_));
    if (timed > 0 && not_slower == timed) {
      for (auto& line : analysis::none_slower_lines(candidates, sandwich_parent.profile, sandwich_culprit.profile)) {
        lines.push_back(std::move(line));
      }
    }
    return lines;
  }

  int report(const std::string& first_bad) {
    Commit& commit = candidate(first_bad);
    const std::string parent_sha = process::git_output(source_, {"rev-parse", first_bad + "^"});
    const bool confirm = request_.confirm_sessions > 0;
    const Sandwich checked = confirm ? sandwich(commit.sha, parent_sha) : Sandwich{};
    const bool confirmed = confirm && checked.verdict.confirmed;
    const Commit* parent = parent_sha == good_.sha ? &good_ : nullptr;
    if (const auto it = commits_.find(parent_sha); it != commits_.end()) parent = &it->second;
    std::ostringstream out;
    // "found" is never said of a culprit the sandwich did not confirm.
    if (!confirm) {
      out << fmt::format("first bad commit: {} {} — unconfirmed: --confirm-sessions 0 skipped the A/B/A sandwich\n",
                         commit.sha, commit.subject);
    } else if (confirmed) {
      out << fmt::format("first bad commit: {} {} — confirmed by A/B/A ({}: {})\n", commit.sha, commit.subject,
                         sandwich_terms(checked), checked.verdict.why);
    } else {
      out << fmt::format("first bad commit: {} {} — NOT confirmed: {}{}\n", commit.sha, commit.subject,
                         checked.measured ? fmt::format("A/B/A ({}): ", sandwich_terms(checked)) : "",
                         checked.verdict.why);
    }
    const auto mine = session_means(commit);
    const auto parents = parent ? session_means(*parent) : std::map<RowIdentity, std::vector<double>>{};
    for (const auto& row : rows_) {
      out << fmt::format("  {}\n", row_name(row));
      if (const auto it = checked.evidence.find(row); it != checked.evidence.end()) {
        out << fmt::format("    A/B/A sandwich: {}\n", it->second);
      }
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
    if (confirmed) {
      for (const std::string& line : checked.kernel_time) out << "  " << line << "\n";
      if (!checked.function_times.empty()) {
        out << "  Functions timed with kfunc/ on the parent and the culprit, alternated:\n";
        for (const std::string& line : checked.function_times) out << "    " << line << "\n";
      }
    }
    out << steps_summary();
    std::cout << out.str() << "\nstep log:\n" << text_.str();
    // The stored log ends with the evidence too.
    text_ << "\n" << out.str();
    return finish(confirmed || !confirm ? kExitOk : kExitFailure);
  }

  // How much a sandwich measured and at what level it was tested.
  std::string sandwich_terms(const Sandwich& checked) const {
    return fmt::format("{} sessions of the parent, {} of the culprit, alternated; look {} of {}, compare at false "
                       "discovery rate {:.3g} = alpha {} / {} looks",
                       checked.parent_sessions, checked.culprit_sessions, checked.looks, checked.max_looks,
                       checked.level, alpha_, checked.max_looks);
  }

  // Every step with how confidently it was decided.
  std::string steps_summary() const {
    std::ostringstream out;
    out << fmt::format("steps ({} to {} sessions a commit; every look tests at alpha' = alpha / looks = {} / {} = {:.3g}):\n",
                       first_sessions_, max_sessions_, alpha_, looks_, alpha_ / looks_);
    for (const auto& step : steps_) {
      out << fmt::format("  step {} {} \"{}\": {}, {} sessions, {}\n", step.step, short_sha(step.sha), step.subject,
                         analysis::to_string(step.decision), step.sessions, step.confidence);
      for (const auto& row : step.rows) out << fmt::format("    {}\n", row);
    }
    if (steps_.empty()) out << "  none: git named the first bad commit from the endpoints alone\n";
    return out.str();
  }

  const BisectRequest request_;
  ConnectSut connect_;
  plan::Plan plan_;
  std::string source_;
  int first_sessions_ = 3;
  int max_sessions_ = 12;
  int looks_ = 10;
  double alpha_ = 0.01;
  std::vector<RowIdentity> rows_;
  Commit good_, bad_;
  std::map<std::string, Commit> commits_;
  std::map<RowIdentity, std::vector<double>> good_means_, bad_means_;
  bool endpoint_row_invalid_ = false;
  std::map<std::string, Better> betters_;
  std::unique_ptr<sut::Connection> local_;
  std::unique_ptr<sut::Connection> shared_connection_;
  bool deploys_ = false;  // sut.boot on an ssh SUT: every session boots the commit's kernel
  std::optional<deploy::SutKernel> sut_original_;  // what that SUT ran before the first boot
  std::map<std::string, std::unique_ptr<sut::Connection>> connections_;
  bool per_profile_connection_ = false;
  bool local_sut_ = false;
  runner::Catalogue catalogue_;
  std::vector<runner::BenchmarkRun> runs_;
  build::BuildOptions build_options_;
  bool build_incremental_ = false;
  std::string store_url_;
  std::unique_ptr<store::ResultStore> store_;
  std::function<std::string(const std::string&)> tree_for_;
  std::map<std::string, std::unique_ptr<OwnedWorktree>> endpoint_trees_;
  std::string head_sha_;
  std::string last_why_;
  std::vector<StepRecord> steps_;
  std::ostringstream text_;
};

Bisector::Bisector(const BisectRequest& request, ConnectSut connect)
    : search_(std::make_unique<Search>(request, std::move(connect))) {}
Bisector::~Bisector() = default;
int Bisector::run() {
  return search_->leaving_sut([this] { return search_->run(); });
}
int Bisector::step() {
  return search_->leaving_sut([this] { return search_->step(); });
}

}  // namespace kbench::app
