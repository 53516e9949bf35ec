// kbench export: every stored sample, unrounded, for scripts and spreadsheets.
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/sample_export.h"

namespace kbench::cli {

namespace {

struct ExportOptions {
  std::string format = "csv";
  std::vector<std::string> swprofiles;
  store::SampleQuery filter;  // --sut/--benchmark/--resultclass
  std::string store_url;
};

void export_command(const ExportOptions& options) {
  const auto writer = report::make_sample_writer(options.format, std::cout);
  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, options.swprofiles);
  store::SampleQuery query = options.filter;
  query.swprofiles = options.swprofiles;
  writer->begin();
  opened.store->for_each_sample(query, [&](const store::SampleRow& sample) { writer->write(sample); });
  writer->end();
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write every stored sample (unrounded) as CSV or JSON");
  cmd->add_option("--format", options->format, "csv (default) or json");
  cmd->add_option("--swprofile", options->swprofiles, "only these swprofiles (repeatable; default: all)");
  add_sample_filter_options(*cmd, options->filter);
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Columns: sut, swprofile, session, session_index, benchmark, params, result_class, unit,\n"
      "direction (higher|lower is better), repeat, value.\n"
      "Examples:\n"
      "  kbench export > samples.csv\n"
      "  kbench export --format json --swprofile base --swprofile patched");
  cmd->callback([options] { export_command(*options); });
}

}  // namespace kbench::cli
