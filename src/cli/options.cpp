#include "cli/options.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.h"
#include "common/errors.h"
#include "common/spoken_list.h"

namespace kbench::cli {

void add_glob_option(CLI::App& command, const std::string& name, std::string& into, const std::string& description) {
  command.add_option_function<std::string>(
      name, [&into, name](const std::string& text) { into = parse_glob(name, text); }, description);
}

void add_choice_option(CLI::App& command, const std::string& name, std::string& into,
                       const std::vector<std::string>& choices, const std::string& description,
                       const std::map<std::string, std::string>& aliases) {
  command.add_option_function<std::string>(
      name,
      [&into, name, choices, aliases](const std::string& text) {
        if (std::find(choices.begin(), choices.end(), text) != choices.end()) {
          into = text;
        } else if (const auto alias = aliases.find(text); alias != aliases.end()) {
          into = alias->second;
        } else {
          throw InputError(fmt::format("{} '{}': expected {}", name, text, spoken_list(choices)));
        }
      },
      description);
}

void add_integer_option(CLI::App& command, const std::string& name, std::optional<int>& into, int min, int max,
                        const std::string& description) {
  command.add_option_function<std::string>(
      name, [&into, name, min, max](const std::string& text) { into = parse_integer(name, text, min, max); },
      fmt::format("{} ({} to {})", description, min, max));
}

void add_timeout_option(CLI::App& command, const std::string& name, std::string& into,
                        const std::string& description) {
  command.add_option_function<std::string>(
      name,
      [&into, name](const std::string& text) {
        parse_timeout(name, text);
        into = text;
      },
      fmt::format("{} ({}s to {}h, whole seconds)", description, kMinTimeout.count(),
                  std::chrono::duration_cast<std::chrono::hours>(kMaxTimeout).count()));
}

void add_name_option(CLI::App& command, const std::string& name, std::string& into, const std::string& description) {
  command.add_option_function<std::string>(
      name,
      [&into, name](const std::string& text) {
        check_name(name, text);
        into = text;
      },
      description);
}

void add_sample_filter_options(CLI::App& command, store::SampleQuery& filter) {
  add_glob_option(command, "--sut", filter.sut_glob, "only SUTs matching this glob");
  add_glob_option(command, "--benchmark", filter.benchmark_glob, "only benchmarks matching this glob");
  add_glob_option(command, "--resultclass", filter.resultclass_glob,
                  "only result classes matching this glob, e.g. 'p99*'");
}

}  // namespace kbench::cli
