#include "runner/catalogue.h"

#include <fnmatch.h>

#include <nlohmann/json.hpp>

#include "common/cpu_list.h"
#include "common/errors.h"
#include "common/records.h"
#include "runner/agent_invocation.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::runner {

std::vector<std::string> Catalogue::matching(const std::string& glob) const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries) {
    if (fnmatch(glob.c_str(), name.c_str(), 0) == 0) out.push_back(name);
  }
  // A plain name of an open family (kfunc/schedule) is a benchmark too.
  if (out.empty() && glob.find_first_of("*?[") == std::string::npos && find(glob)) out.push_back(glob);
  return out;
}

std::string Catalogue::known_names() const {
  std::string out;
  for (const auto& [name, entry] : entries) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::optional<CatalogueEntry> Catalogue::find(const std::string& name) const {
  if (const auto it = entries.find(name); it != entries.end()) return it->second;
  for (const auto& [prefix, listed] : families) {
    if (name.size() <= prefix.size() || !name.starts_with(prefix)) continue;
    const auto it = entries.find(listed);
    if (it == entries.end()) continue;
    CatalogueEntry entry = it->second;
    entry.name = name;
    return entry;
  }
  return std::nullopt;
}

Params CatalogueEntry::effective_params(const std::string& size, const Params& overrides) const {
  return resolve_params(name, params, parse_size_name(size, "size"), overrides);
}

Catalogue parse_catalogue(const nlohmann::json& document) {
  const nlohmann::json* list = &document;
  if (document.is_object() && document.contains("benchmarks")) list = &document["benchmarks"];
  if (!list->is_array()) throw RunError("its output is not a JSON list of benchmarks");
  Catalogue catalogue;
  for (const auto& item : *list) {
    if (!item.is_object()) continue;
    CatalogueEntry entry;
    entry.name = item.value("name", "");
    entry.description = item.value("description", "");
    if (const auto params = item.find("params"); params != item.end() && params->is_array()) {
      for (const auto& p : *params) {
        if (p.is_object()) entry.params.push_back(param_spec_from_json(p));
      }
    }
    if (const auto classes = item.find("result_classes"); classes != item.end() && classes->is_array()) {
      for (const auto& rc : *classes) {
        try {
          entry.result_classes.push_back(records::result_class_from_json(rc));
        } catch (const records::BadRecord& bad) {
          throw RunError(entry.name + ": " + bad.what());
        }
      }
    }
    if (const auto family = item.find("family"); family != item.end() && family->is_string() && !entry.name.empty()) {
      catalogue.families[family->get<std::string>()] = entry.name;
    }
    if (!entry.name.empty()) catalogue.entries[entry.name] = std::move(entry);
  }
  return catalogue;
}

Catalogue fetch_catalogue(sut::Connection& connection, std::chrono::seconds limit) {
  std::string output;
  const auto result = capture_agent_output(connection, {"list"}, limit, output);
  const nlohmann::json document = nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
  std::string reason = describe_failure(result);
  if (result.exit_status == 0) {
    try {
      return parse_catalogue(document);
    } catch (const RunError& bad) {
      reason = bad.what();
    }
  }
  if (reason.empty()) reason = "its output is not a JSON list of benchmarks";
  throw RunError("kbench-agent list on " + connection.describe() + " failed: " + reason);
}

void check_cpus_on_sut(const std::string& cpus, const nlohmann::json& fingerprint, const std::string& sut) {
  if (cpus.empty()) return;
  const auto wanted = parse_cpu_list(cpus, "--cpus");
  const sysinfo::FingerprintView view(fingerprint);
  std::vector<int> available;
  if (const auto allowed = view.cpus_allowed()) {
    available = parse_cpu_list(*allowed, "the SUT's cpus_allowed");
  } else if (const auto count = view.cpu_count()) {
    for (int cpu = 0; cpu < *count; ++cpu) available.push_back(cpu);
  } else {
    return;  // an agent that says neither checks --cpus itself
  }
  require_cpus(wanted, available, "--cpus", cpus, "the CPUs of SUT " + sut);
}

}  // namespace kbench::runner
