// kbench calibrate: many sessions of the running kernel on purpose, so the
// noise model (the per-SUT prior of the session-level test, and the run noise
// of sides measured in different runs) has data.
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/run_plan.h"
#include "common/errors.h"
#include "common/utc_time.h"
#include "plan/plan.h"
#include "process/process.h"

namespace kbench::cli {

namespace {

struct CalibrateOptions {
  RunOptions run;
  // Paused sessions are runs of their own (plan.block): what teaches the run
  // noise, without which sides from different runs are not tested.
  std::string spread = "5m";
};

// "2026-11-30T23:46:16Z" -> "calibrate-20261130T234616Z": one word the
// shell and every report take as it is.
std::string calibration_profile_name() {
  std::string name = "calibrate-";
  for (const char c : utc_now_iso8601()) {
    if (c != '-' && c != ':') name += c;
  }
  return name;
}

void calibrate_command(CalibrateOptions options) {
  const auto gap = parse_spread(options.spread);
  if (!options.run.sessions) options.run.sessions = 6;
  options.run.swprofile = calibration_profile_name();
  const RunDone done = measure_running_kernel(options.run, gap);
  std::string sut;
  for (const auto& session : done.result.sessions) sut = session.sut.name;
  std::cout << "\ncalibration: " << done.result.sessions.size() << " sessions of swprofile "
            << options.run.swprofile << " on SUT " << sut << " in " << done.store_url << "\n"
            << "The noise model of every comparison on this SUT now learns from them; see the\n"
            << "between-session noise with: kbench noise " << options.run.swprofile
            << " --store " << process::shell_quote(done.store_url) << "\n";
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  options->run.suite = "quick";
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure the running kernel as many sessions, spread in time, to teach the noise model");
  add_choice_option(*cmd, "--suite", options->run.suite, {"quick", "default"},
                    "shipped plan to run: quick (default) or default");
  add_integer_option(*cmd, "--sessions", options->run.sessions, 2, kMaxSessions, "sessions to run (default 6)");
  cmd->add_option_function<std::string>(
      "--spread",
      [options](const std::string& text) {
        parse_spread(text);
        options->spread = text;
      },
      "pause between sessions, e.g. 90s or 1h (default 5m; 0: none, which teaches no run-to-run noise)");
  add_glob_option(*cmd, "--benchmark", options->run.benchmark_glob,
                  "run only benchmarks matching this glob, e.g. 'syscall/*'");
  add_name_option(*cmd, "--sut", options->run.sut_name, "name of this SUT in reports (default: hostname)");
  add_execution_options(*cmd, options->run.cpus, options->run.strict, options->run.store_url);
  cmd->footer(
      "The noise model of `kbench compare` learns, per SUT and row, how much session means\n"
      "vary within a run, and how much whole runs of one kernel differ (sides measured by two\n"
      "separate `kbench run`s are tested against that; with no kernel measured in 2 runs they\n"
      "are not tested). This command gives it both on purpose: it runs the suite on the running\n"
      "kernel as swprofile calibrate-<UTC date-time>, --sessions times, pausing --spread between\n"
      "sessions; each paused session counts as a run of its own (SIGINT ends a pause and the run).\n"
      "Examples:\n"
      "  kbench calibrate                              # quick suite, 6 sessions over about 30 min\n"
      "  kbench calibrate --sessions 10 --spread 10m   # 10 sessions over about 2 hours\n"
      "  kbench calibrate --spread 0                   # back to back: session noise only\n"
      "  kbench calibrate --suite default --benchmark 'syscall/*' --cpus 1\n"
      "Then: kbench noise calibrate-<UTC date-time>. Exit status as kbench run's.");
  cmd->callback([options] { calibrate_command(*options); });
}

}  // namespace kbench::cli
