#pragma once
// Options and checks that several commands share, so that each is parsed and
// worded the same way wherever it appears.
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/result_store.h"

namespace kbench::cli {

// --fdr: a level in (0, 1) or "off" (no correction).
std::optional<double> parse_fdr(const std::string& text);

// --sut, --benchmark, --resultclass: globs written straight into the query;
// the caller sets the swprofiles.
void add_sample_filter_options(CLI::App& command, store::SampleQuery& filter);

// The store named by --store (or the default), which must already exist;
// opened read-only (the reading commands never write, and work on a
// read-only or full file system).
struct OpenedStore {
  std::string url;
  std::unique_ptr<store::ResultStore> store;
};
OpenedStore open_existing_store(const std::string& store_url_option);

// Throws InputError naming the first profile the store does not hold; with
// KnownProfiles::List the message also lists the profiles it does hold.
enum class KnownProfiles { Omit, List };
void require_swprofiles(const OpenedStore& opened, const std::vector<std::string>& profiles,
                        KnownProfiles known = KnownProfiles::Omit);

}  // namespace kbench::cli
