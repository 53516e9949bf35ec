#include "app/fleet.h"

#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/option_values.h"
#include "common/errors.h"
#include "common/spoken_list.h"
#include "common/temp_directory.h"
#include "common/utc_time.h"
#include "process/process.h"
#include "runner/fleet_progress.h"
#include "runner/interrupt.h"
#include "runner/pairing.h"
#include "runner/plan_executor.h"
#include "sut/method.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::app {

namespace {

struct Worker {
  plan::SutSpec sut;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::string out;           // its session tables, printed when all are done
  std::string partial_line;  // stderr up to the next newline
  std::string last_error;    // its last line that was not a step line
  int status = -1;           // exit status; 128+N when killed by signal N
  std::optional<int> wait_status;  // once reaped
  bool gone = false;               // its partner told so (a crossover's or duet's)
};

// Where the SUT's sessions of the latest run of the plan stand.
struct SutTally {
  int planned = 0;
  int complete = 0;
  int incomplete = 0;  // begun, not finished: --resume continues them
  int failed_benchmarks = 0;
  int resumable() const { return planned - complete; }
};

SutTally tally(store::ResultStore& store, const std::string& key, const std::vector<std::string>& profiles,
               int sessions) {
  SutTally result;
  result.planned = sessions * static_cast<int>(profiles.size());
  const auto latest = store.latest_plan(key, profiles);
  if (!latest) return result;
  const std::string run = latest->value(sysinfo::fingerprint_key::plan::kRun, std::string());
  for (const auto& profile : profiles) {
    for (int s = 0; s < sessions; ++s) {
      const auto id = store.find_plan_session(profile, key, run, s);
      if (!id) continue;
      const auto session = store.session(*id);
      if (session && session->complete()) ++result.complete;
      else ++result.incomplete;
      for (const auto& benchmark : store.session_benchmarks(*id)) {
        if (benchmark.outcome && benchmark.outcome->status == store::OutcomeStatus::Failed) {
          ++result.failed_benchmarks;
        }
      }
    }
  }
  return result;
}

int terminal_width() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string self_executable() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw RunError("cannot find the kbench executable (/proc/self/exe) to start a worker per SUT");
  return self.string();
}

std::string describe_status(int status) {
  if (status > 128) return fmt::format("stopped by signal {}", status - 128);
  return fmt::format("exit status {}", status);
}

// Reads what is there; false at EOF or error (the descriptor is closed).
bool drain(int& fd, const std::function<void(const char*, std::size_t)>& sink) {
  char buffer[65536];
  const ssize_t got = read(fd, buffer, sizeof buffer);
  if (got > 0) {
    sink(buffer, static_cast<std::size_t>(got));
    return true;
  }
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  close(fd);
  fd = -1;
  return false;
}

}  // namespace

std::string fleet_plan_key(const std::string& plan_key, const std::string& sut_name) {
  return plan_key + "#sut=" + sut_name;
}

std::string duet_worker_name(const std::string& sut_name, int half) { return fmt::format("{}#{}", sut_name, half); }

std::vector<plan::SutSpec> duet_workers(const plan::Plan& plan) {
  std::vector<plan::SutSpec> workers;
  for (int half = 0; half < 2; ++half) {
    plan::SutSpec worker = *plan.sut;
    worker.name = duet_worker_name(plan.sut->name, half);
    workers.push_back(std::move(worker));
  }
  return workers;
}

std::vector<plan::SutSpec> select_suts(const plan::Plan& plan, const std::vector<std::string>& names, bool exact) {
  if (plan.suts.empty()) {
    if (names.empty()) return {};
    throw InputError("--sut " + names.front() + ": plan " + plan.path +
                     " has no suts: list (expected a plan listing several SUTs under suts:)");
  }
  if (names.empty()) return plan.suts;
  std::vector<std::string> patterns;
  for (const auto& name : names) patterns.push_back(exact ? name : parse_glob("--sut", name));
  auto matches = [&](const std::string& pattern, const std::string& sut) {
    return pattern == sut || (!exact && fnmatch(pattern.c_str(), sut.c_str(), 0) == 0);
  };
  std::vector<plan::SutSpec> selected;
  for (const auto& spec : plan.suts) {
    if (std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) { return matches(p, spec.name); })) {
      selected.push_back(spec);
    }
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool known =
        std::any_of(plan.suts.begin(), plan.suts.end(), [&](const auto& s) { return matches(patterns[i], s.name); });
    if (!known) {
      throw InputError(fmt::format("--sut {}: plan {} has no such SUT (known: {})", names[i], plan.path,
                                   comma_list(plan.suts, &plan::SutSpec::name)));
    }
  }
  return selected;
}

void check_fleet(const plan::Plan& plan, const std::vector<plan::SutSpec>& suts, const FleetOptions& options) {
  runner::ExecOptions exec;
  exec.swprofiles = options.swprofiles;
  // A resumed crossover or duet measures each side alone: any selection may
  // go on.
  if (plan.design != plan::Design::Interleaved && !options.resume) {
    if (plan.design == plan::Design::Crossover && suts.size() != 2) {
      throw InputError(fmt::format("{}:{}: design: expected crossover's 2 SUTs measured together, got --sut "
                                   "selecting {} (leave out --sut, or continue one SUT with --resume)",
                                   plan.path, plan.design_line, comma_list(suts, &plan::SutSpec::name)));
    }
    const auto profiles = runner::select_swprofiles(plan.for_sut(suts.front()), exec);
    if (profiles.size() != 2) {
      throw InputError(fmt::format("{}:{}: design: expected {}'s 2 swprofiles measured together, got "
                                   "--swprofile selecting {} (leave out --swprofile, or continue with --resume)",
                                   plan.path, plan.design_line,
                                   plan.design == plan::Design::Duet ? "duet" : "crossover",
                                   comma_list(profiles, &plan::SwprofileSpec::name)));
    }
  }
  int local = 0;
  for (const auto& sut : suts) {
    const plan::Plan one = plan.for_sut(sut);
    const auto profiles = runner::select_swprofiles(one, exec);
    // Bad connection parameters (or a missing qemu kernel) are input errors,
    // found before any worker starts.
    const sut::Method& method = plan::sut_method(sut);
    if (method.has(sut::Capability::BootsKernel)) {
      for (const auto& profile : profiles) plan::connect(sut, &profile);
    } else {
      plan::connect(sut, nullptr);
    }
    if (method.has(sut::Capability::OnController)) ++local;
  }
  if (local > 1) {
    for (const auto& profile : runner::select_swprofiles(plan.for_sut(suts.front()), exec)) {
      if (!profile.sysctl.empty()) {
        throw InputError(fmt::format("{}:{}: swprofile {} sets sysctls, but {} local SUTs would run at once on this "
                                     "one machine (expected at most one local SUT, or select one with --sut)",
                                     plan.path, profile.line, profile.name, local));
      }
    }
  }
}

process::Child spawn_worker(const plan::SutSpec&, const std::vector<std::string>& argv) {
  return process::spawn(argv, {.death_signal = SIGTERM});
}

int execute_fleet(const plan::Plan& plan, const std::vector<plan::SutSpec>& suts,
                   const std::vector<runner::BenchmarkRun>& runs, const FleetOptions& options,
                   store::ResultStore& store, const StartWorker& start_worker) {
  const std::string self = self_executable();
  std::vector<std::string> names;
  for (const auto& sut : suts) names.push_back(sut.name);
  runner::FleetProgress view(stderr, isatty(STDERR_FILENO) == 1, names, terminal_width());
  runner::install_interrupt_handlers();
  view.message(fmt::format("kbench: {} SUTs in parallel, one worker each: {}", suts.size(), fmt::join(names, ", ")));
  // A crossover's or duet's two workers meet before every session's
  // measurement and every benchmark; a resumed one measures each side alone.
  // The directory a crossover's or duet's two workers meet in
  // (runner/pairing.h), made before they start and removed when both have
  // ended.
  std::optional<TempDirectory> pairing;
  std::string pairing_id;
  const bool duet = plan.design == plan::Design::Duet;
  if (plan.design != plan::Design::Interleaved && !options.resume && suts.size() == 2) {
    pairing.emplace("kbench-pair");
    pairing_id = fmt::format("{}-{}", utc_now_iso8601(), getpid());
    view.message(duet ? fmt::format("kbench: duet: two VMs of {} at once, each on one half of this machine's CPUs, "
                                    "swapping halves every round",
                                    plan.sut->name)
                      : fmt::format("kbench: crossover: {} and {} measure the other swprofile at the same moment",
                                    names[0], names[1]));
  }

  std::vector<Worker> workers;
  for (const auto& sut : suts) {
    std::vector<std::string> argv = {self, "plan", "exec", options.plan_path, "--fleet-worker"};
    if (duet) argv.insert(argv.end(), {"--duet-half", std::to_string(workers.size())});
    else argv.insert(argv.end(), {"--sut", sut.name});
    argv.insert(argv.end(), {"--store", options.store_url});
    if (options.resume) argv.push_back("--resume");
    for (const auto& name : options.swprofiles) {
      argv.push_back("--swprofile");
      argv.push_back(name);
    }
    if (!options.cpus.empty()) {
      argv.push_back("--cpus");
      argv.push_back(options.cpus);
    }
    if (options.strict) argv.push_back("--strict");
    if (pairing) {
      argv.insert(argv.end(), {"--pair-dir", pairing->path(), "--pair-position", std::to_string(workers.size()),
                               "--pair-id", pairing_id});
    }
    Worker worker;
    worker.sut = sut;
    const process::Child child = start_worker(sut, argv);
    worker.pid = child.pid;
    worker.out_fd = child.stdout_fd;
    worker.err_fd = child.stderr_fd;
    workers.push_back(std::move(worker));
  }

  bool forwarded = false;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<std::size_t, bool>> owners;  // worker, is stderr
    for (std::size_t i = 0; i < workers.size(); ++i) {
      if (workers[i].out_fd >= 0) {
        fds.push_back({workers[i].out_fd, POLLIN, 0});
        owners.emplace_back(i, false);
      }
      if (workers[i].err_fd >= 0) {
        fds.push_back({workers[i].err_fd, POLLIN, 0});
        owners.emplace_back(i, true);
      }
    }
    if (fds.empty()) break;
    // A worker that ended (or closed its output, which it does only at its
    // end) is gone for its partner, however it ended.
    for (std::size_t i = 0; i < workers.size(); ++i) {
      Worker& worker = workers[i];
      if (!worker.wait_status) worker.wait_status = process::wait_for_exit_until(worker.pid, process::Clock::now());
      if (pairing && !worker.gone && (worker.wait_status || (worker.out_fd < 0 && worker.err_fd < 0))) {
        runner::mark_gone(pairing->path(), static_cast<int>(i));
        worker.gone = true;
      }
    }
    // Each worker handles the signal as a single-SUT run does: the agent in
    // flight is stopped, settings restored, the session left resumable.
    // Workers lead process groups of their own, so a terminal's Ctrl-C
    // reaches only this process.
    if (runner::interrupted() && !forwarded) {
      for (const auto& worker : workers) kill(worker.pid, runner::interrupt_signal());
      forwarded = true;
    }
    const int ready = poll(fds.data(), fds.size(), 250);
    if (ready < 0 && errno != EINTR) throw RunError(std::string("poll on the SUT workers failed: ") + strerror(errno));
    if (ready <= 0) continue;
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& worker = workers[owners[k].first];
      if (!owners[k].second) {
        drain(worker.out_fd, [&](const char* data, std::size_t size) { worker.out.append(data, size); });
        continue;
      }
      const bool open = drain(worker.err_fd, [&](const char* data, std::size_t size) {
        worker.partial_line.append(data, size);
        for (auto newline = worker.partial_line.find('\n'); newline != std::string::npos;
             newline = worker.partial_line.find('\n')) {
          std::string line = worker.partial_line.substr(0, newline);
          worker.partial_line.erase(0, newline + 1);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          if (line.empty()) continue;
          if (!runner::is_step_line(line)) worker.last_error = line;
          view.line(worker.sut.name, line);
        }
      });
      if (!open && !worker.partial_line.empty()) {
        worker.last_error = worker.partial_line;
        view.line(worker.sut.name, worker.partial_line);
        worker.partial_line.clear();
      }
    }
  }
  for (auto& worker : workers) {
    worker.status = process::exit_code(worker.wait_status ? *worker.wait_status : process::wait_for_exit(worker.pid));
  }
  pairing.reset();
  view.finish();

  for (const auto& worker : workers) {
    if (worker.out.empty()) continue;
    std::cout << "== SUT " << worker.sut.name
              << (worker.sut.sut_class.empty() ? "" : " (class " + worker.sut.sut_class + ")") << "\n"
              << worker.out;
  }
  std::cout.flush();

  runner::ExecOptions exec;
  exec.swprofiles = options.swprofiles;
  std::vector<std::string> profiles;
  for (const auto& profile : runner::select_swprofiles(plan.for_sut(suts.front()), exec)) {
    profiles.push_back(profile.name);
  }
  int sessions = 1;
  for (const auto& run : runs) sessions = std::max(sessions, run.settings.sessions);

  std::size_t name_width = 3;
  std::size_t class_width = 5;
  for (const auto& sut : suts) {
    name_width = std::max(name_width, sut.name.size());
    class_width = std::max(class_width, sut.sut_class.size());
  }
  std::cerr << fmt::format("{:<{}}  {:<{}}  {:<11}  {:>8}  {:>6}  {:>9}\n", "SUT", name_width, "class", class_width,
                           "status", "complete", "failed", "resumable");
  std::vector<const Worker*> failed;
  for (const auto& worker : workers) {
    const SutTally t = tally(store, fleet_plan_key(options.plan_key, worker.sut.name), profiles, sessions);
    const bool ok = worker.status == 0;
    if (!ok) failed.push_back(&worker);
    const std::string status = ok ? "ok" : worker.status > 128 ? "interrupted" : "FAILED";
    std::cerr << fmt::format("{:<{}}  {:<{}}  {:<11}  {:>8}  {:>6}  {:>9}\n", worker.sut.name, name_width,
                             worker.sut.sut_class.empty() ? "-" : worker.sut.sut_class, class_width, status,
                             fmt::format("{}/{}", t.complete, t.planned), t.failed_benchmarks, t.resumable());
  }
  if (failed.empty()) return kExitOk;
  for (const auto* worker : failed) {
    std::cerr << "kbench: SUT " << worker->sut.name << ": " << describe_status(worker->status)
              << (worker->last_error.empty() ? "" : ": " + worker->last_error) << "\n";
  }
  std::string again = "kbench plan exec " + process::shell_quote(options.plan_path) + " --resume";
  std::vector<std::string> failed_names;
  for (const auto* worker : failed) {
    // A duet's halves are resumed together (a finished one measures nothing).
    if (!duet) again += " --sut " + process::shell_quote(worker->sut.name);
    failed_names.push_back(worker->sut.name);
  }
  for (const auto& name : options.swprofiles) again += " --swprofile " + process::shell_quote(name);
  if (!options.cpus.empty()) again += " --cpus " + process::shell_quote(options.cpus);
  again += " --store " + process::shell_quote(options.store_url);
  if (runner::interrupted()) {
    std::cerr << "kbench: interrupted by signal " << runner::interrupt_signal() << "; continue with: " << again << "\n";
    return 128 + runner::interrupt_signal();
  }
  std::cerr << fmt::format("kbench: {} of {} SUTs failed: {}; the others went on. Continue the failed ones with: {}\n",
                           failed.size(), workers.size(), fmt::join(failed_names, ", "), again);
  return kExitFailure;
}

}  // namespace kbench::app
