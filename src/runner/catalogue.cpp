#include "runner/catalogue.h"

#include <fnmatch.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/records.h"
#include "runner/agent_invocation.h"

namespace kbench::runner {

std::vector<std::string> Catalogue::matching(const std::string& glob) const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries) {
    if (fnmatch(glob.c_str(), name.c_str(), 0) == 0) out.push_back(name);
  }
  return out;
}

std::string Catalogue::known_names() const {
  std::string out;
  for (const auto& [name, entry] : entries) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::map<std::string, std::string> CatalogueEntry::effective_params(
    const std::string& size, const std::map<std::string, std::string>& overrides) const {
  std::map<std::string, std::string> params = size == "quick" ? quick_values : default_values;
  for (const auto& [key, value] : overrides) {
    if (!this->params.count(key)) {
      std::string known;
      for (const auto& k : this->params) known += (known.empty() ? "" : ", ") + k;
      throw InputError(name + ": no parameter '" + key + "' (known: " + (known.empty() ? "none" : known) + ")");
    }
    params[key] = value;
  }
  return params;
}

Catalogue fetch_catalogue(sut::Connection& connection) {
  std::string output;
  const auto result = capture_agent_output(connection, {"list"}, std::chrono::seconds(60), output);
  const nlohmann::json document = nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* list = &document;
  if (document.is_object() && document.contains("benchmarks")) list = &document["benchmarks"];
  if (result.exit_status != 0 || !list->is_array()) {
    std::string reason = describe_failure(result, std::chrono::seconds(60));
    if (reason.empty()) reason = "its output is not a JSON list of benchmarks";
    throw RunError("kbench-agent list on " + connection.describe() + " failed: " + reason);
  }
  Catalogue catalogue;
  for (const auto& item : *list) {
    CatalogueEntry entry;
    entry.name = item.value("name", "");
    entry.description = item.value("description", "");
    if (const auto params = item.find("params"); params != item.end() && params->is_array()) {
      for (const auto& p : *params) {
        const std::string name = p.value("name", "");
        entry.params.insert(name);
        entry.default_values[name] = p.value("default", "");
        entry.quick_values[name] = p.value("quick", "");
      }
    }
    if (const auto classes = item.find("result_classes"); classes != item.end() && classes->is_array()) {
      for (const auto& rc : *classes) {
        try {
          entry.result_classes.push_back(records::result_class_from_json(rc));
        } catch (const records::BadRecord& bad) {
          throw RunError("kbench-agent list on " + connection.describe() + ": " + entry.name + ": " + bad.what());
        }
      }
    }
    if (!entry.name.empty()) catalogue.entries[entry.name] = std::move(entry);
  }
  return catalogue;
}

}  // namespace kbench::runner
