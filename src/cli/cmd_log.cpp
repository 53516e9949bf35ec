// kbench log: the texts kept in the store beside the samples (the log of a
// `kbench bisect`, schema version 5), listed and shown.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "store/result_store.h"

namespace kbench::cli {

namespace {

struct LogOptions {
  std::string kind;
  std::string id;
  std::string store_url;
};

std::size_t line_count(const std::string& text) {
  const auto newlines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// One line per log, oldest first: what `log show` needs (the id) and what
// tells them apart (kind, name, when, how long).
void list_logs(const LogOptions& options) {
  const OpenedStore opened = open_existing_store(options.store_url);
  std::cout << fmt::format("{:>6}  {:<10} {:<20}  {:>6}  {}\n", "id", "kind", "created", "lines", "name");
  for (const auto& log : opened.store->logs(options.kind)) {
    std::cout << fmt::format("{:>6}  {:<10} {:<20}  {:>6}  {}\n", log.id, log.kind, log.created_utc,
                             line_count(log.text), log.name);
  }
}

// The text as it was stored, so it can be piped or mailed as it is; a text
// without a final newline gets one, so the shell prompt is not glued to it.
void show_log(const LogOptions& options) {
  const int id = parse_integer("ID", options.id, 1, 2147483647);
  const OpenedStore opened = open_existing_store(options.store_url);
  for (const auto& log : opened.store->logs("")) {
    if (log.id != id) continue;
    std::cout << log.text;
    if (!log.text.empty() && log.text.back() != '\n') std::cout << '\n';
    return;
  }
  throw InputError(fmt::format("log show {}: no log with this id in {} (kbench log list shows the ids)", id,
                               opened.url));
}

}  // namespace

void add_log_command(CLI::App& app) {
  auto options = std::make_shared<LogOptions>();
  CLI::App* cmd = app.add_subcommand("log", "Logs kept in the store (e.g. of kbench bisect): list and show");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  kbench log list\n"
      "  kbench log list --kind bisect\n"
      "  kbench log show 3 > bisect.log");

  CLI::App* list = cmd->add_subcommand("list", "One line per log, oldest first: id, kind, created (UTC), lines, name");
  list->add_option("--kind", options->kind, "only logs of this kind (e.g. bisect); default: every kind");
  add_store_option(*list, options->store_url);
  list->footer(
      "Examples:\n"
      "  kbench log list\n"
      "  kbench log list --kind bisect --store postgresql://kbench@db.example/results");
  list->callback([options] { list_logs(*options); });

  CLI::App* show = cmd->add_subcommand("show", "Print one log's text as it was stored");
  show->add_option("id", options->id, "the log's id (kbench log list)")->required();
  add_store_option(*show, options->store_url);
  show->footer(
      "Examples:\n"
      "  kbench log show 3\n"
      "  kbench log show 3 | mail -s 'bisect of v6.1..v6.2' linux-perf-users@vger.kernel.org");
  show->callback([options] { show_log(*options); });
}

}  // namespace kbench::cli
