#pragma once
// The stores the use cases open, named as the command line names them (--store,
// else $KBENCH_STORE, else the default file).
#include <memory>
#include <string>
#include <vector>

#include "store/result_store.h"

namespace kbench::app {

// The URL --store names: the option's value, or the default store when empty.
std::string resolve_store_url(const std::string& option_value);

// The store named by --store (or the default), which must already exist;
// opened read-only (the reading commands never write, and work on a
// read-only or full file system).
struct OpenedStore {
  std::string url;
  std::unique_ptr<store::ResultStore> store;
};
OpenedStore open_existing_store(const std::string& store_url_option);

// --resume: whether the store holds a run, of any of `swprofiles` (all when
// empty), of the plan with this key (ExecOptions::plan_key). A missing SQLite
// file holds none, and is not created.
bool has_run_to_resume(const std::string& store_url, const std::string& plan_key,
                       const std::vector<std::string>& swprofiles);

// Throws InputError naming the first profile the store does not hold; with
// KnownProfiles::List the message also lists the profiles it does hold.
enum class KnownProfiles { Omit, List };
void require_swprofiles(const OpenedStore& opened, const std::vector<std::string>& profiles,
                        KnownProfiles known = KnownProfiles::Omit);

}  // namespace kbench::app
