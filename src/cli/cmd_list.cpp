// kbench list: what the store holds.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "store/result_store.h"

namespace kbench::cli {

namespace {

struct ListOptions {
  std::string what;
  std::string glob = "*";
  std::string store_url;
};

void list_command(const ListOptions& options) {
  auto store = store::open_store(resolve_store_url(options.store_url), store::OpenMode::MustExist);
  if (options.what == "sut") {
    std::cout << fmt::format("{:<24} {:<8} {:>5} {:>7} {:>8}  {}\n", "SUT", "arch", "cpus", "memory", "sessions",
                             "cpu model");
    for (const auto& l : store->list_suts(options.glob)) {
      std::cout << fmt::format("{:<24} {:<8} {:>5} {:>4}GiB {:>8}  {}\n", l.sut.name, l.sut.arch, l.sut.cpu_count,
                               l.sut.memory_gib, l.sessions, l.sut.cpu_model);
    }
  } else if (options.what == "swprofile") {
    std::cout << fmt::format("{:<32} {:>8} {:>9}  {:<28} {}\n", "swprofile", "sessions", "samples", "kernel",
                             "SUTs");
    for (const auto& l : store->list_swprofiles(options.glob)) {
      std::cout << fmt::format("{:<32} {:>8} {:>9}  {:<28} {}\n", l.name, l.sessions, l.samples,
                               l.kernel_release, fmt::join(l.suts, ","));
    }
  } else {
    std::cout << fmt::format("{:<28} {:>9}  {}\n", "benchmark", "samples", "result classes");
    for (const auto& l : store->list_benchmarks(options.glob)) {
      std::vector<std::string> labels;
      for (const auto& rc : l.result_classes) labels.push_back(rc.label());
      std::cout << fmt::format("{:<28} {:>9}  {}\n", l.name, l.samples, fmt::join(labels, "; "));
    }
  }
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  CLI::App* cmd = app.add_subcommand("list", "List the SUTs, swprofiles or benchmarks in the store");
  cmd->add_option("kind", options->what, "sut, swprofile or benchmark")
      ->required()
      ->check(CLI::IsMember({"sut", "swprofile", "benchmark"}));
  add_glob_option(*cmd, "--id", options->glob, "only names matching this glob");
  add_store_option(*cmd, options->store_url);
  cmd->footer("Examples:\n  kbench list swprofile\n  kbench list benchmark --id 'syscall/*'");
  cmd->callback([options] { list_command(*options); });
}

}  // namespace kbench::cli
