#pragma once
// The agent's benchmark catalogue (`kbench-agent list`), as the controller
// needs it: which names exist and which parameters each accepts.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sut/connection.h"

namespace kbench::runner {

struct CatalogueEntry {
  std::string name;
  std::string description;
  std::set<std::string> params;
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
