// kbench merge SRC DST: the command line of app/merge.h.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "app/merge.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace kbench::cli {

namespace {

// --sut a,b --sut c: every glob checked as the other commands check theirs.
void add_glob_list_option(CLI::App& command, const std::string& name, std::vector<std::string>& into,
                          const std::string& description) {
  command.add_option_function<std::vector<std::string>>(
      name,
      [&into, name](const std::vector<std::string>& values) {
        for (const auto& value : values) {
          std::size_t start = 0;
          while (true) {
            const auto comma = value.find(',', start);
            into.push_back(parse_glob(name, value.substr(start, comma - start)));
            if (comma == std::string::npos) break;
            start = comma + 1;
          }
        }
      },
      description)
      // One value an occurrence, so `--sut a SRC DST` leaves SRC and DST to the positionals.
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void merge_command(const app::MergeRequest& request) {
  const app::MergeSummary summary = app::merge_stores(request);
  const char* verb = request.dry_run ? "would be copied" : "copied";
  std::cout << fmt::format("merge {} into {}{}:\n", request.source, request.destination,
                           request.dry_run ? " (dry run: nothing written)" : "");
  std::cout << fmt::format("  sessions {}: {}", verb, summary.copied);
  if (summary.unfinished > 0) std::cout << fmt::format(" ({} unfinished, merged as they are)", summary.unfinished);
  std::cout << '\n';
  std::cout << fmt::format("  sessions already present: {}\n", summary.present);
  if (!request.dry_run) std::cout << fmt::format("  sessions renumbered: {}\n", summary.renumbered.size());
  for (const auto& line : summary.renumbered) std::cout << line << '\n';
  std::cout << fmt::format("  samples {}: {}\n", verb, summary.samples);
  std::cout << fmt::format("  seconds: {:.2f}\n", summary.seconds);
}

}  // namespace

void add_merge_command(CLI::App& app) {
  auto options = std::make_shared<app::MergeRequest>();
  CLI::App* cmd = app.add_subcommand("merge", "Copy sessions from one store into another (idempotent)");
  cmd->add_option("source", options->source, "SRC: the store to copy from (opened read-only)")->required();
  cmd->add_option("destination", options->destination, "DST: the store to copy into (created if missing)")
      ->required();
  add_glob_list_option(*cmd, "--swprofile", options->swprofile_globs,
                       "only swprofiles matching these globs (repeatable or comma-separated; default: all)");
  add_glob_list_option(*cmd, "--sut", options->sut_globs,
                       "only SUTs matching these globs (repeatable or comma-separated; default: all)");
  cmd->add_flag("--dry-run", options->dry_run, "check and count, write nothing (DST is not created)");
  cmd->footer(
      "A session is identified by its uid: one already in DST with the same content is skipped, so\n"
      "merging twice adds nothing. The same uid with other content is a conflict: refused (exit 2)\n"
      "before anything is written. A session whose number DST already has for its SUT and\n"
      "swprofile gets the next free number. Unfinished sessions are copied as they are.\n"
      "Examples:\n"
      "  kbench merge colleague.db ~/.local/share/kbench/results.db\n"
      "  kbench merge lab.db sqlite:///srv/kbench/all.db --sut 'arm-*' --swprofile 'base,patched-*'\n"
      "  kbench merge lab.db all.db --dry-run");
  cmd->callback([options] { merge_command(*options); });
}

}  // namespace kbench::cli
