#include "cli/options.h"

#include "cli/commands.h"
#include "common/errors.h"

namespace kbench::cli {

std::optional<double> parse_fdr(const std::string& text) {
  if (text == "off") return std::nullopt;
  try {
    std::size_t used = 0;
    const double q = std::stod(text, &used);
    if (used == text.size() && q > 0 && q < 1) return q;
  } catch (const std::exception&) {
  }
  throw InputError("--fdr " + text + ": expected a level between 0 and 1 (e.g. 0.05) or off");
}

void add_sample_filter_options(CLI::App& command, store::SampleQuery& filter) {
  command.add_option("--sut", filter.sut_glob, "only SUTs matching this glob");
  command.add_option("--benchmark", filter.benchmark_glob, "only benchmarks matching this glob");
  command.add_option("--resultclass", filter.resultclass_glob, "only result classes matching this glob");
}

OpenedStore open_existing_store(const std::string& store_url_option) {
  OpenedStore opened;
  opened.url = resolve_store_url(store_url_option);
  opened.store = store::open_store(opened.url, store::OpenMode::ReadOnly);
  return opened;
}

void require_swprofiles(const OpenedStore& opened, const std::vector<std::string>& profiles,
                        KnownProfiles known) {
  for (const auto& profile : profiles) {
    if (opened.store->has_swprofile(profile)) continue;
    std::string message = "swprofile '" + profile + "' is not in " + opened.url;
    if (known == KnownProfiles::List) {
      std::string names;
      for (const auto& listing : opened.store->list_swprofiles("*")) names += (names.empty() ? "" : ", ") + listing.name;
      message += " (known: " + (names.empty() ? std::string("none") : names) + ")";
    }
    throw InputError(message);
  }
}

}  // namespace kbench::cli
