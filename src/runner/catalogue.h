#pragma once
// The agent's benchmark catalogue (`kbench-agent list`), as the controller
// needs it: which names exist and which parameters each accepts.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/result_class.h"
#include "sut/connection.h"

namespace kbench::runner {

struct CatalogueEntry {
  std::string name;
  std::string description;
  std::set<std::string> params;
  std::map<std::string, std::string> default_values;  // param -> value at size default
  std::map<std::string, std::string> quick_values;    // param -> value at size quick
  std::vector<ResultClass> result_classes;            // at the default parameters

  // The parameters the agent will use: the size's values with `overrides`.
  // Throws InputError naming an unknown parameter.
  std::map<std::string, std::string> effective_params(const std::string& size,
                                                      const std::map<std::string, std::string>& overrides) const;
};

struct Catalogue {
  std::map<std::string, CatalogueEntry> entries;

  bool contains(const std::string& name) const { return entries.count(name) > 0; }
  // Names matching a shell glob, sorted.
  std::vector<std::string> matching(const std::string& glob) const;
  std::string known_names() const;  // "a, b, c" for error messages
};

Catalogue fetch_catalogue(sut::Connection& connection);

}  // namespace kbench::runner
