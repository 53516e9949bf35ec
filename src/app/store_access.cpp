#include "app/store_access.h"

#include <fmt/format.h>

#include "common/errors.h"
#include "common/spoken_list.h"

namespace kbench::app {

std::string resolve_store_url(const std::string& option_value) {
  return option_value.empty() ? store::default_store_url() : option_value;
}

OpenedStore open_existing_store(const std::string& store_url_option) {
  OpenedStore opened;
  opened.url = resolve_store_url(store_url_option);
  opened.store = store::open_store(opened.url, store::OpenMode::ReadOnly);
  return opened;
}

bool has_run_to_resume(const std::string& store_url, const std::string& plan_key,
                       const std::vector<std::string>& swprofiles) {
  // A PostgreSQL database without kbench's tables has nothing to resume either.
  if (!store::store_present(store_url)) return false;
  return store::open_store(store_url, store::OpenMode::ReadOnly)->latest_plan(plan_key, swprofiles).has_value();
}

void require_swprofiles(const OpenedStore& opened, const std::vector<std::string>& profiles,
                        KnownProfiles known) {
  for (const auto& profile : profiles) {
    if (opened.store->has_swprofile(profile)) continue;
    std::string message = "swprofile '" + profile + "' is not in " + opened.url;
    if (known == KnownProfiles::List) {
      const auto listings = opened.store->list_swprofiles("*");
      const std::string names = comma_list(listings, &store::SwprofileListing::name);
      message += " (known: " + (names.empty() ? std::string("none") : names) + ")";
    }
    throw InputError(message);
  }
}

}  // namespace kbench::app
