#pragma once
// One file per command; each adds its subcommand to the app. A callback
// throws InputError (exit 2) or RunError (exit 1); main() prints one line.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "app/store_access.h"

namespace kbench::cli {

void add_run_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
// `command_line`: the words after the program name, as typed; the html
// report shows them as the command that reproduces it.
void add_compare_command(CLI::App& app, std::vector<std::string> command_line = {});
void add_show_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_noise_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_catalogue_command(CLI::App& app);
void add_session_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_trend_command(CLI::App& app);
void add_log_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_build_command(CLI::App& app);
void add_bisect_command(CLI::App& app);
// `kbench serve`: the dashboard of serve/, over the store --store names.
void add_serve_command(CLI::App& app);

// Shared option helpers.
void add_store_option(CLI::App& command, std::string& store_url);
using app::resolve_store_url;
// --cpus, --strict and --store: the options every command that runs benchmarks has.
void add_execution_options(CLI::App& command, std::string& cpus, bool& strict, std::string& store_url);

// The exit status a command asks for once it has printed its output
// (e.g. 1 when a benchmark failed but the run went on).
int& pending_exit_status();
// Sets the pending exit status to `status` unless that is kExitOk: an earlier
// failure of the same command is not forgotten by a later success.
void keep_exit_status(int status);

}  // namespace kbench::cli
