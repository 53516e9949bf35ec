// kbench plan check|exec: validate or run a YAML plan.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/commands.h"
#include "cli/session_report.h"
#include "common/errors.h"
#include "plan/plan.h"
#include "runner/catalogue.h"
#include "runner/plan_executor.h"
#include "sut/factory.h"
#include "sut/process.h"

namespace kbench::cli {

namespace {

struct PlanOptions {
  std::string path;
  std::vector<std::string> swprofiles;
  bool resume = false;
  std::string cpus;
  bool strict = false;
  std::string store_url;
};

void check_command(const PlanOptions& options) {
  const plan::Plan plan = plan::load_plan(options.path);
  runner::ExecOptions exec;
  exec.swprofiles = options.swprofiles;
  if (!plan.swprofiles.empty() || !options.swprofiles.empty()) runner::select_swprofiles(plan, exec);
  auto connection = sut::make_local_connection(sut::find_agent_binary());
  const auto runs = runner::resolve_benchmarks(plan, runner::fetch_catalogue(*connection));
  int repeats = 0;
  for (const auto& run : runs) repeats += run.settings.repeats * run.settings.sessions;
  std::cout << options.path << ": ok: " << plan.swprofiles.size() << " swprofiles, " << runs.size()
            << " benchmarks, " << repeats << " repeats per swprofile\n";
}

void exec_command(const PlanOptions& options) {
  const plan::Plan plan = plan::load_plan(options.path);
  runner::ExecOptions exec;
  exec.swprofiles = options.swprofiles;
  exec.resume = options.resume;
  exec.cpus = options.cpus;
  exec.strict = options.strict;
  exec.plan_key = std::filesystem::absolute(options.path).lexically_normal().string();
  runner::select_swprofiles(plan, exec);

  // The catalogue comes from the local agent: the same binary every SUT runs,
  // and asking a qemu SUT would cost a boot.
  auto local = sut::make_local_connection(sut::find_agent_binary());
  const auto runs = runner::resolve_benchmarks(plan, runner::fetch_catalogue(*local));
  const plan::SutSpec* sut_spec = plan.sut ? &*plan.sut : nullptr;
  const bool per_profile = sut_spec && sut_spec->method == "qemu";
  std::map<std::string, std::unique_ptr<sut::Connection>> connections;
  if (sut_spec && !per_profile) connections[""] = sut::make_connection(sut_spec, nullptr);
  if (per_profile) {
    // Bad qemu params or a missing kernel image are input errors: find them
    // before the store is opened.
    for (const auto& profile : runner::select_swprofiles(plan, exec)) {
      connections[profile.name] = sut::make_connection(sut_spec, &profile);
    }
  }
  const runner::ConnectionFor connection_for = [&](const plan::SwprofileSpec& profile) -> sut::Connection& {
    if (!sut_spec) return *local;
    return *connections.at(per_profile ? profile.name : "");
  };
  const std::string store_url = resolve_store_url(options.store_url);
  auto store = store::open_store(store_url, store::OpenMode::CreateIfMissing);

  std::string again = "kbench plan exec " + sut::shell_quote(options.path);
  for (const auto& name : options.swprofiles) again += " --swprofile " + sut::shell_quote(name);
  if (!options.cpus.empty()) again += " --cpus " + sut::shell_quote(options.cpus);
  execute_and_report(plan, runs, connection_for, *store, exec,
                     "; continue with: " + again + " --resume --store " + sut::shell_quote(store_url));
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Validate or execute a YAML plan");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  kbench plan check plans/default.yaml\n"
      "  kbench plan exec my-plan.yaml --store sqlite:///srv/kbench.db\n"
      "  kbench plan exec my-plan.yaml --resume     # after an interruption");

  CLI::App* check = cmd->add_subcommand("check", "Validate a plan without running it");
  check->add_option("plan", options->path, "YAML plan file")->required();
  check->add_option("--swprofile", options->swprofiles, "check only these swprofiles (repeatable)");
  check->callback([options] { check_command(*options); });

  CLI::App* exec = cmd->add_subcommand("exec", "Run a plan: sessions x swprofiles x benchmarks");
  exec->add_option("plan", options->path, "YAML plan file")->required();
  exec->add_option("--swprofile", options->swprofiles,
                   "run only these swprofiles (repeatable); required when the plan names none");
  exec->add_flag("--resume", options->resume, "continue this plan's unfinished sessions in the store");
  add_execution_options(*exec, options->cpus, options->strict, options->store_url);
  exec->footer(
      "Sessions alternate between swprofiles (A B A B) so drift falls on both. Sysctls a\n"
      "swprofile sets are restored afterwards, also after SIGINT/SIGTERM (and, after kill -9,\n"
      "by the next kbench plan exec or run). Exit 1 when a benchmark failed, 128+N on signal N.");
  exec->callback([options] { exec_command(*options); });
}

}  // namespace kbench::cli
