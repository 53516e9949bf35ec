// kbench export: every stored sample, unrounded, for scripts and spreadsheets.
#include <algorithm>
#include <iostream>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/format_table.h"

namespace kbench::cli {

namespace {

struct ExportOptions {
  std::string format = "csv";
  std::vector<std::string> swprofiles;
  store::SampleQuery filter;  // --sut/--benchmark/--resultclass
  std::string store_url;
};

void export_command(const ExportOptions& options) {
  const auto writer = report::find_format(options.format, report::View::Samples).samples(std::cout);
  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, options.swprofiles);
  store::SampleQuery query = options.filter;
  query.swprofiles = options.swprofiles;
  std::unordered_map<std::int64_t, std::string> uids;
  for (const auto& session : opened.store->list_sessions(options.swprofiles)) uids[session.id] = session.uid;
  writer->begin();
  // A store delivers a session's samples in an order of its own (its result
  // classes' ids): sorted by what they are, a session exports the same from
  // every store it was merged into. One session at a time stays small.
  std::vector<store::SampleRow> session;
  const auto flush = [&] {
    std::sort(session.begin(), session.end(), [](const store::SampleRow& a, const store::SampleRow& b) {
      return std::tie(a.benchmark, a.params, a.result_class.name, a.result_class.unit, a.repeat) <
             std::tie(b.benchmark, b.params, b.result_class.name, b.result_class.unit, b.repeat);
    });
    for (const auto& sample : session) writer->write(sample, uids[sample.session]);
    session.clear();
  };
  opened.store->for_each_sample(query, [&](const store::SampleRow& sample) {
    if (!session.empty() && session.back().session != sample.session) flush();
    session.push_back(sample);
  });
  flush();
  writer->end();
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand("export", "Write every stored sample (unrounded) as CSV or JSON");
  cmd->add_option("--format", options->format,
                  "output format: " + report::format_choices(report::View::Samples) + " (default: " +
                      options->format + ")");
  cmd->add_option("--swprofile", options->swprofiles, "only these swprofiles (repeatable; default: all)");
  add_sample_filter_options(*cmd, options->filter);
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Columns: sut, swprofile, session_uid, session_index, benchmark, params, result_class, unit,\n"
      "direction (higher|lower is better), repeat, value, sut_class. A session's samples are ordered by\n"
      "benchmark, params, result class, unit and repeat, so a session exports the same from any store\n"
      "`kbench merge` copied it into.\n"
      "Examples:\n"
      "  kbench export > samples.csv\n"
      "  kbench export --format json --swprofile base --swprofile patched");
  cmd->callback([options] { export_command(*options); });
}

}  // namespace kbench::cli
