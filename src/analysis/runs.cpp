#include "analysis/runs.h"

#include "sysinfo/fingerprint_view.h"

namespace kbench::analysis {

namespace fingerprint_key = sysinfo::fingerprint_key;

std::string run_of(std::int64_t session, const nlohmann::json& fingerprint) {
  if (const auto plan = sysinfo::FingerprintView(fingerprint).plan()) {
    for (const auto& run : {plan->block, plan->run})
      if (run && !run->empty()) return *run;
  }
  return "session:" + std::to_string(session);
}

std::string round_of(const nlohmann::json& fingerprint) {
  const auto plan = sysinfo::FingerprintView(fingerprint).plan();
  if (!plan || !plan->session) return {};
  return std::to_string(*plan->session);
}

std::string kernel_of(const nlohmann::json& fingerprint) {
  const sysinfo::FingerprintView view(fingerprint);
  nlohmann::json identity = nlohmann::json::object();
  for (const char* key : {fingerprint_key::kKernelRelease, fingerprint_key::kKernelVersion,
                          fingerprint_key::kKernelConfigSha256, fingerprint_key::kKernelConfigGzSha256,
                          fingerprint_key::kCmdline, fingerprint_key::kSysctl, fingerprint_key::kSwprofile,
                          fingerprint_key::kSeccomp}) {
    const nlohmann::json* value = view.member(key);
    identity[key] = value ? *value : nlohmann::json();
  }
  return identity.dump();
}

SessionOrigins session_origins(store::ResultStore& store) {
  SessionOrigins origins;
  for (const store::SessionListing& listed : store.list_sessions({})) {
    if (listed.samples == 0) continue;
    const auto session = store.session(listed.id);
    if (!session) continue;
    SessionOrigin& origin = origins[listed.id];
    origin.run = run_of(listed.id, session->fingerprint);
    origin.kernel = kernel_of(session->fingerprint);
    origin.round = round_of(session->fingerprint);
    if (const auto plan = sysinfo::FingerprintView(session->fingerprint).plan(); plan && plan->pair && plan->pair_unit) {
      origin.pair = *plan->pair;
      origin.pair_unit = *plan->pair_unit;
    }
  }
  return origins;
}

}  // namespace kbench::analysis
