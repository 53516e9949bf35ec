// kbench bisect run|step: the command line of app/bisect.h's Bisector.
#include <iostream>
#include <memory>

#include "app/bisect.h"
#include "cli/commands.h"

namespace kbench::cli {

namespace {

void add_common_options(CLI::App& cmd, app::BisectArguments& options, bool confirms) {
  cmd.add_option("plan", options.plan_path, "YAML plan with one swprofile whose build: source is a git tree")->required();
  cmd.add_option("--good", options.good, "a commit (any git revision) without the regression")->required();
  cmd.add_option("--bad", options.bad, "a later commit with it")->required();
  cmd.add_option("--row", options.rows,
                 "BENCH:CLASS to classify by, e.g. 'syscall/getppid:mean (ns)' (repeatable); default: the rows "
                 "compare marks (R) between the endpoints");
  cmd.add_option("--sessions", options.sessions, "first sessions per commit (>= 2, default 3)");
  cmd.add_option("--max-sessions", options.max_sessions,
                 "sessions per commit at most before it is skipped as unsettled, and of each endpoint (default 12)");
  if (confirms) {
    cmd.add_option("--confirm-sessions", options.confirm_sessions,
                   "sessions of the culprit in the A/B/A sandwich that confirms it, its parent's one more "
                   "(default 3; 0: no sandwich, the culprit reported unconfirmed)");
    cmd.add_option("--confirm-max-sessions", options.confirm_max_sessions,
                   "sessions of the culprit at most: while a row is undecided and none is unchanged or improved, "
                   "the sandwich adds one session a side and looks again, each look at alpha / looks "
                   "(default --confirm-sessions + 5)");
    cmd.add_option("--time-functions", options.time_functions,
                   "with kernel profiles (kernel_profile: true): how many of the functions that gained the most "
                   "share in a confirmed culprit are timed with kfunc/ on the parent and the culprit, alternated "
                   "as the sandwich (default 3, all the list has; 0: none)");
  }
  cmd.add_option("--alpha", options.alpha,
                 "error rate of a classification (default 0.01); each look tests at alpha / looks");
  cmd.add_option("--build-cache", options.build_cache, "kernel build cache (default $KBENCH_BUILD_CACHE, else "
                                                       "~/.cache/kbench/kernels)");
  add_execution_options(cmd, options.cpus, options.strict, options.store_url);
}

}  // namespace

void add_bisect_command(CLI::App& app) {
  auto options = std::make_shared<app::BisectArguments>();
  CLI::App* cmd = app.add_subcommand("bisect", "Find the commit that caused a regression, under noise");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  kbench bisect run bisect.yaml --good v6.1 --bad HEAD\n"
      "  kbench bisect run bisect.yaml --good v6.1 --bad HEAD --row 'syscall/getppid:mean (ns)' --alpha 0.05\n"
      "  cd linux && git bisect start HEAD v6.1 && git bisect run kbench bisect step ../bisect.yaml --good v6.1 --bad HEAD\n"
      "Each commit is built (build: of the plan's one swprofile, ref set to the commit; stored as swprofile\n"
      "bisect-<12 hex>), booted and measured, and classified against the endpoints' sessions: more sessions\n"
      "until settled, a skip after --max-sessions (docs/bisect.md). The SUT: qemu (each agent run boots\n"
      "the commit's kernel) or a lab machine over ssh with sut.boot (each session a kexec or GRUB boot into\n"
      "the commit's kernel, staged there once; the machine is booted back into its own kernel at the end).");

  CLI::App* run = cmd->add_subcommand("run", "Measure both endpoints, check they differ, then drive git bisect");
  add_common_options(*run, *options, true);
  run->footer(
      "git bisect runs in a worktree kbench owns (git worktree add --detach), never in your checkout.\n"
      "When git names the first bad commit, measures it and its parent again, alternated P C P ... P,\n"
      "each session a boot of its own (the A/B/A sandwich), and tests every row with compare's verdicts:\n"
      "confirmed when every row is a regression (R). Prints the first bad commit, confirmed or not, with\n"
      "its evidence, every step's decision and confidence, and the step log; the log is stored\n"
      "(kbench log list --kind bisect). Exit 0: the culprit confirmed (or --confirm-sessions 0);\n"
      "1: the culprit NOT confirmed, the endpoints do not differ, or only skipped commits are left;\n"
      "2: bad input.");
  run->callback([options] { pending_exit_status() = app::Bisector(app::parse_bisect_request(*options)).run(); });

  CLI::App* step = cmd->add_subcommand("step", "Classify HEAD of the source tree, for git bisect run");
  add_common_options(*step, *options, false);
  step->footer(
      "Measures HEAD of the plan's build source (the commit git bisect checked out), reads the endpoints'\n"
      "sessions from the store (measuring those missing). Exit 0 good, 1 bad, 125 skip (why on stderr);\n"
      "128 on an error or when the endpoints do not differ, which stops git bisect run.");
  step->callback([options] {
    try {
      pending_exit_status() = app::Bisector(app::parse_bisect_request(*options)).step();
    } catch (const std::exception& e) {
      // Exit 1 or 2 would read as "bad" to git bisect run: stop it instead.
      std::cerr << "kbench: " << e.what() << "\n";
      pending_exit_status() = 128;
    }
  });
}

}  // namespace kbench::cli
