// kbench plan check|exec|status: the command line of app/plan_exec.h.
#include <iostream>
#include <memory>
#include <string>

#include "app/plan_exec.h"
#include "cli/build_request.h"
#include "cli/commands.h"

namespace kbench::cli {

namespace {

void check_command(const app::PlanRequest& request) {
  const app::PlanSummary summary = app::check_plan(request);
  for (const auto& note : summary.notes) std::cerr << "kbench: plan check: " << note << "\n";
  const auto counted = [](std::size_t count, const char* one, const char* several) {
    return std::to_string(count) + " " + (count == 1 ? one : several);
  };
  std::cout << request.path << ": ok: ";
  if (summary.suts > 0) std::cout << counted(summary.suts, "SUT", "SUTs") << ", ";
  std::cout << counted(summary.swprofiles, "swprofile", "swprofiles") << ", "
            << counted(summary.benchmarks, "benchmark", "benchmarks") << ", "
            << counted(static_cast<std::size_t>(summary.repeats), "repeat", "repeats") << " per swprofile\n";
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<app::PlanRequest>();
  CLI::App* cmd = app.add_subcommand("plan", "Validate or execute a YAML plan");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  kbench plan check plans/default.yaml\n"
      "  kbench plan exec my-plan.yaml --store sqlite:///srv/kbench.db\n"
      "  kbench plan exec my-plan.yaml --resume     # after an interruption\n"
      "  kbench plan exec ab.yaml --until-decided --budget 1h\n"
      "  kbench plan exec gcc-vs-clang.yaml --build-cache /srv/kernels   # swprofiles with build:");

  CLI::App* check = cmd->add_subcommand("check", "Validate a plan without running it");
  check->add_option("plan", options->path, "YAML plan file")->required();
  check->add_option("--swprofile", options->swprofiles, "check only these swprofiles (repeatable)");
  check->callback([options] { check_command(*options); });

  CLI::App* exec = cmd->add_subcommand("exec", "Run a plan: sessions x swprofiles x benchmarks");
  exec->add_option("plan", options->path, "YAML plan file")->required();
  exec->add_option("--swprofile", options->swprofiles,
                   "run only these swprofiles (repeatable); required when the plan names none");
  exec->add_flag("--resume", options->resume, "continue this plan's unfinished sessions in the store");
  CLI::Option* until_decided =
      exec->add_flag("--until-decided", options->until_decided,
                     "after the planned sessions, add sessions (alternating swprofiles) for benchmarks with undecided "
                     "rows, first swprofile as base, each look at level/looks");
  // Alone, they would limit nothing: refused rather than ignored.
  exec->add_option("--budget", options->budget, "with --until-decided: stop before a round would exceed this "
                                                "wall time in all (e.g. 30m, 2h); default: no limit")
      ->needs(until_decided);
  exec->add_option("--max-looks", options->max_looks, "with --until-decided: looks at the data in all, 2-20 "
                                                      "(default 4); the level of each is q/looks")
      ->needs(until_decided);
  exec->add_option("--sut", options->suts,
                   "with a plan listing suts: measure only these SUTs (repeatable); default all, in parallel");
  // A worker measuring one SUT of a suts: plan (started by the plan exec
  // that runs them all; not for users).
  exec->add_flag("--fleet-worker", options->fleet_worker)->group("");
  // A crossover's or duet's worker: where it meets the other worker, which of
  // the two it is, and the id both share (set by the fleet).
  exec->add_option("--pair-dir", options->pair_dir)->group("");
  exec->add_option("--pair-position", options->pair_position)->group("");
  exec->add_option("--pair-id", options->pair_id)->group("");
  // A duet's worker: the half of this machine's CPUs it starts on.
  exec->add_option("--duet-half", options->duet_half)->group("");
  add_execution_options(*exec, options->cpus, options->strict, options->store_url);
  add_build_cache_option(*exec, options->build_cache);
  exec->footer(
      "Examples:\n"
      "  kbench plan exec ab.yaml                          # every swprofile, the plan's sessions\n"
      "  kbench plan exec ab.yaml --swprofile A            # only A\n"
      "  kbench plan exec ab.yaml --resume                 # after an interruption\n"
      "  kbench plan exec ab.yaml --until-decided --budget 1h && kbench compare A B --looks 4\n"
      "  kbench plan exec lab.yaml --sut arm-1             # one SUT of a suts: plan\n"
      "Sessions alternate between swprofiles so drift falls on every side, each round in a\n"
      "balanced order (A B, B A, A B, ...; docs/statistics.md). Sysctls a\n"
      "swprofile sets are restored afterwards, also after SIGINT/SIGTERM (and, after kill -9,\n"
      "by the next kbench plan exec or run). Exit 1 when a benchmark failed, 128+N on signal N.\n"
      "On an ssh SUT with sut.boot every session is a fresh boot into its swprofile's kernel\n"
      "(kernel: {deb: F} | {image: F, modules: T} | {release: R}), installed once, booted by kexec\n"
      "or a one-shot GRUB entry, verified (uname -r, uname -v, /proc/cmdline) before measuring;\n"
      "the SUT is booted back into its own kernel at the end. kbench list boots shows each boot\n"
      "(docs/deploy.md).\n"
      "The machine kbench runs on boots the same way (connection local with sut.boot, as root,\n"
      "with systemd): each boot ends this process, a systemd unit resumes the plan after it, every\n"
      "boot gets panic=10 so a kernel that panics reboots into the default one (a failed boot),\n"
      "and at the end the machine boots back into its own kernel and the unit is removed;\n"
      "kbench plan status PLAN shows where the plan stands.\n"
      "A plan with suts: (a list of SUTs, each with name, connection, optional class and boot)\n"
      "measures them in parallel, one worker process each, into the same store; a failing SUT\n"
      "does not stop the others (exit 1 naming it); --resume continues each SUT's own sessions.\n"
      "design: crossover (2 SUTs of one class, 2 swprofiles): the SUTs run each round in opposite\n"
      "orders and wait for each other before each session and benchmark, so each pair of sessions\n"
      "measured side by side covers both swprofiles (plan.pair in the fingerprint; docs/remote.md).\n"
      "design: duet (one qemu sut:, 2 swprofiles): two VMs at once, each pinned to one half of this\n"
      "machine's CPUs, swapping halves every round, paired as a crossover's.\n"
      "Swprofiles with build: (a kernel built from a source tree) are built first, or found in\n"
      "the build cache, one progress line each on stderr (kbench build --help, docs/builds.md);\n"
      "a failed build exits 1 with the tail of its log, before anything is measured.");
  exec->callback([options] { keep_exit_status(app::execute_plan_request(*options)); });

  CLI::App* status = cmd->add_subcommand("status", "Show where a plan stands: sessions, boots, the boot in flight");
  status->add_option("plan", options->path, "YAML plan file")->required();
  status->add_option("--store", options->store_url,
                     "the plan's store (default: the one a plan booting this machine runs into, else KBENCH_STORE "
                     "or ~/.local/share/kbench/results.db)");
  status->footer(
      "Example:\n"
      "  kbench plan status ab.yaml\n"
      "Prints the plan, its run, a status line (finished, waiting for boot N, running, stopped),\n"
      "the sessions measured per swprofile, each boot (ok or why it failed) and, for a plan that\n"
      "boots this machine (sut.connection.method local with sut.boot), the boot in flight, the\n"
      "systemd unit that resumes the plan after each boot, and its log (docs/deploy.md).");
  status->callback([options] { std::cout << app::plan_status(*options); });
}

}  // namespace kbench::cli
