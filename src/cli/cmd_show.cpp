// kbench show: the single-profile table of every stored session of a profile.
#include <iostream>

#include "analysis/compare.h"
#include "cli/commands.h"
#include "common/errors.h"
#include "report/model.h"

namespace kbench::cli {

namespace {

struct ShowOptions {
  std::string profile;
  std::string store_url;
};

void show_command(const ShowOptions& options) {
  const std::string url = resolve_store_url(options.store_url);
  auto store = store::open_store(url, store::OpenMode::MustExist);
  if (!store->has_swprofile(options.profile)) {
    throw InputError("swprofile '" + options.profile + "' is not in " + url);
  }
  store::SampleQuery query;
  query.swprofiles = {options.profile};
  auto tables = analysis::build_profile_tables(store->samples(query), options.profile);
  for (const auto status : {store::OutcomeStatus::Skipped, store::OutcomeStatus::Failed}) {
    for (const auto& listing : store->list_outcomes({options.profile}, status)) {
      if (tables.empty()) tables.push_back({listing.sut, options.profile, {}, {}, {}});
      auto& into = status == store::OutcomeStatus::Skipped ? tables.front().skipped : tables.front().failed;
      into.push_back(listing.benchmark + ": " + listing.outcome.reason + " (session " +
                     std::to_string(listing.session) + ")");
    }
  }
  for (const auto& table : tables) report::render_profile_grid(table, std::cout);
}

}  // namespace

void add_show_command(CLI::App& app) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand("show", "Show every stored result of one swprofile");
  cmd->add_option("profile", options->profile, "swprofile name")->required();
  add_store_option(*cmd, options->store_url);
  cmd->footer("Example:\n  kbench show base");
  cmd->callback([options] { show_command(*options); });
}

}  // namespace kbench::cli
