#pragma once
// The agent's benchmark catalogue (`kbench-agent list`), as the controller
// needs it: which names exist, which parameters each accepts (with kind and
// range, so that values are checked before anything is written) and which
// result classes it reports.
#include <chrono>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/params.h"
#include "common/result_class.h"
#include "sut/connection.h"

namespace kbench::runner {

struct CatalogueEntry {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  std::vector<ResultClass> result_classes;  // at the default parameters

  // The parameters the agent will use: the size's values with `overrides`,
  // each checked against its spec (the agent's own resolve_params). Throws
  // InputError naming an unknown parameter or a bad value.
  Params effective_params(const std::string& size, const Params& overrides) const;
};

struct Catalogue {
  std::map<std::string, CatalogueEntry> entries;
  // Open families: prefix ("kfunc/") -> the listed entry's name
  // ("kfunc/finish_task_switch"); any `prefix<x>` is a benchmark with that
  // entry's params and result classes.
  std::map<std::string, std::string> families;

  // The entry of `name`: listed, or made from its open family's entry.
  std::optional<CatalogueEntry> find(const std::string& name) const;
  bool contains(const std::string& name) const { return find(name).has_value(); }
  // Names matching a shell glob, sorted.
  std::vector<std::string> matching(const std::string& glob) const;
  std::string known_names() const;  // "a, b, c" for error messages
};

// `limit`: how long the agent may take to answer. A machine just booted may
// still be busy starting its services, and gets its boot's allowance.
inline constexpr std::chrono::seconds kCatalogueLimit{60};
Catalogue fetch_catalogue(sut::Connection& connection, std::chrono::seconds limit = kCatalogueLimit);
Catalogue parse_catalogue(const nlohmann::json& document);

// Checks a --cpus list against the CPUs of the SUT that `fingerprint` (the
// agent's, fetched before a session begins) describes: its "cpus_allowed",
// else 0 .. cpu_count-1. Throws InputError "--cpus '99': CPU 99 is not one of
// the CPUs of SUT <sut> (0-1)". Does nothing for an empty list or a fingerprint that
// names neither.
void check_cpus_on_sut(const std::string& cpus, const nlohmann::json& fingerprint, const std::string& sut);

}  // namespace kbench::runner
