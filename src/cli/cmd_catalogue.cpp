// kbench catalogue: every benchmark the agent offers, with its parameters
// (kind, range, quick and default values) and result classes. Unlike
// `kbench list benchmark`, which shows what the store holds, this asks the
// agent and needs no store.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "common/records.h"
#include "runner/catalogue.h"
#include "sut/connection.h"

namespace kbench::cli {

namespace {

struct CatalogueOptions {
  std::string glob = "*";
  std::string format = "text";
};

void print_text(const runner::CatalogueEntry& entry, std::ostream& out) {
  out << entry.name << "\n  " << entry.description << "\n";
  if (entry.params.empty()) out << "  parameters: none\n";
  for (const auto& spec : entry.params) {
    out << fmt::format("  --param {}=...  {}\n", spec.name, describe_kind(spec));
    out << fmt::format("      default: '{}'  quick: '{}'\n", spec.default_value, spec.quick_value);
    if (!spec.help.empty()) out << "      " << spec.help << "\n";
  }
  std::string classes;
  for (const auto& rc : entry.result_classes) {
    classes += fmt::format("{}{} [{}, {} is better]", classes.empty() ? "" : ", ", rc.name, rc.unit, kbench::to_string(rc.better));
  }
  out << "  result classes (default size): " << (classes.empty() ? "none" : classes) << "\n\n";
}

nlohmann::json to_json(const runner::CatalogueEntry& entry) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& spec : entry.params) params.push_back(kbench::to_json(spec));
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& rc : entry.result_classes) {
    classes.push_back(records::to_json(rc));
  }
  return {{"name", entry.name}, {"description", entry.description}, {"params", params}, {"result_classes", classes}};
}

void catalogue_command(const CatalogueOptions& options) {
  if (options.glob.empty()) throw InputError("GLOB '': expected a benchmark name or glob such as 'syscall/*'");
  // Read as run --benchmark reads it, so a '[' without its ']' is named as such, not "no benchmark matches".
  const std::string glob = parse_glob("GLOB", options.glob);
  auto connection = sut::make_local_connection(sut::find_agent_binary());
  const runner::Catalogue catalogue = runner::fetch_catalogue(*connection);
  const auto names = catalogue.matching(glob);
  if (names.empty()) {
    throw InputError("GLOB '" + options.glob + "': no benchmark matches (known: " + catalogue.known_names() + ")");
  }
  if (options.format == "json") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& name : names) list.push_back(to_json(catalogue.entries.at(name)));
    std::cout << nlohmann::json{{"benchmarks", list}}.dump(2) << "\n";
  } else {
    for (const auto& name : names) print_text(catalogue.entries.at(name), std::cout);
  }
  std::cout.flush();
  if (!std::cout) throw RunError("cannot write the catalogue to standard output");
}

}  // namespace

void add_catalogue_command(CLI::App& app) {
  auto options = std::make_shared<CatalogueOptions>();
  CLI::App* cmd = app.add_subcommand(
      "catalogue", "Every benchmark kbench-agent offers: parameters (kind, range, values) and result classes");
  cmd->add_option("glob", options->glob, "only benchmarks matching this glob, e.g. 'syscall/*' (default: all)");
  add_choice_option(*cmd, "--format", options->format, {"text", "json"}, "text or json");
  cmd->footer(
      "Examples:\n"
      "  kbench catalogue\n"
      "  kbench catalogue 'perf/*'\n"
      "  kbench catalogue syscall/getpid --format json\n"
      "Parameters are set with kbench run --param KEY=VALUE or a plan's params:; --size quick|default\n"
      "chooses which of the two values the others start from. Needs no store.");
  cmd->callback([options] { catalogue_command(*options); });
}

}  // namespace kbench::cli
