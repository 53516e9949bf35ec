#include "analysis/runs.h"

namespace kbench::analysis {

std::string run_of(std::int64_t session, const nlohmann::json& fingerprint) {
  const auto plan = fingerprint.find("plan");
  if (plan != fingerprint.end() && plan->is_object()) {
    for (const char* key : {"block", "run"}) {
      const auto value = plan->find(key);
      if (value != plan->end() && value->is_string() && !value->get_ref<const std::string&>().empty())
        return value->get<std::string>();
    }
  }
  return "session:" + std::to_string(session);
}

std::string round_of(const nlohmann::json& fingerprint) {
  const auto plan = fingerprint.find("plan");
  if (plan == fingerprint.end() || !plan->is_object()) return {};
  const auto number = plan->find("session");
  if (number == plan->end() || !number->is_number_integer()) return {};
  return std::to_string(number->get<std::int64_t>());
}

std::string kernel_of(const nlohmann::json& fingerprint) {
  nlohmann::json identity = nlohmann::json::object();
  for (const char* key : {"kernel_release", "kernel_version", "kernel_config_sha256", "kernel_config_gz_sha256",
                          "cmdline", "sysctl", "swprofile", "seccomp"}) {
    const auto value = fingerprint.find(key);
    identity[key] = value == fingerprint.end() ? nlohmann::json() : *value;
  }
  return identity.dump();
}

SessionOrigins session_origins(store::ResultStore& store) {
  SessionOrigins origins;
  for (const store::SessionListing& listed : store.list_sessions({})) {
    if (listed.samples == 0) continue;
    const auto session = store.session(listed.id);
    if (!session) continue;
    origins[listed.id] = {run_of(listed.id, session->fingerprint), kernel_of(session->fingerprint),
                          round_of(session->fingerprint)};
  }
  return origins;
}

}  // namespace kbench::analysis
