// kbench export: every stored sample, unrounded, for scripts and spreadsheets.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "report/format.h"
#include "store/result_store.h"

namespace kbench::cli {

namespace {

using report::csv_field;

struct ExportOptions {
  std::string format = "csv";
  std::vector<std::string> swprofiles;
  store::SampleQuery filter;  // --sut/--benchmark/--resultclass
  std::string store_url;
};

// "k=v;k=v": the benchmark's effective parameters; one benchmark name may have
// been run with several parameter sets, and then only this tells them apart.
std::string params_text(const Params& params) {
  std::string text;
  for (const auto& [key, value] : params) text += (text.empty() ? "" : ";") + key + "=" + value;
  return text;
}

void export_command(const ExportOptions& options) {
  if (options.format != "csv" && options.format != "json") {
    throw InputError("--format " + options.format + ": expected csv or json");
  }
  const OpenedStore opened = open_existing_store(options.store_url);
  require_swprofiles(opened, options.swprofiles);
  auto& store = opened.store;
  store::SampleQuery query = options.filter;
  query.swprofiles = options.swprofiles;

  std::ostream& out = std::cout;
  if (options.format == "csv") {
    out << "sut,swprofile,session,session_index,benchmark,params,result_class,unit,direction,repeat,value\n";
    std::string line;
    store->for_each_sample(query, [&](const store::SampleRow& s) {
      line.clear();
      line += csv_field(s.sut) + ',' + csv_field(s.swprofile) + ',' + std::to_string(s.session) + ',' +
              std::to_string(s.session_index) + ',' + csv_field(s.benchmark) + ',' +
              csv_field(params_text(s.params)) + ',' + csv_field(s.result_class.name) + ',' +
              csv_field(s.result_class.unit) + ',' + std::string(kbench::to_string(s.result_class.better)) + ',' +
              std::to_string(s.repeat) + ',' + report::format_exact(s.value) + '\n';
      out << line;
    });
    return;
  }
  // JSON: one array, streamed object by object, so a large store never sits
  // in memory twice. Values are doubles written in round-trip form.
  out << "[";
  bool first = true;
  store->for_each_sample(query, [&](const store::SampleRow& s) {
    nlohmann::ordered_json sample = {{"sut", s.sut},
                             {"swprofile", s.swprofile},
                             {"session", s.session},
                             {"session_index", s.session_index},
                             {"benchmark", s.benchmark},
                             {"params", s.params},
                             {"result_class", s.result_class.name},
                             {"unit", s.result_class.unit},
                             {"direction", std::string(kbench::to_string(s.result_class.better))},
                             {"repeat", s.repeat},
                             {"value", s.value}};
    out << (first ? "\n" : ",\n") << sample.dump();
    first = false;
  });
  out << (first ? "]\n" : "\n]\n");
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
