#include "sysinfo/fingerprint_view.h"

namespace kbench::sysinfo {

using nlohmann::json;

namespace key = fingerprint_key;

namespace {

const json* find_in(const json& object, std::string_view name) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(name));
  return it == object.end() ? nullptr : &*it;
}

std::optional<std::string> text_in(const json& object, std::string_view name) {
  const json* value = find_in(object, name);
  if (!value || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

std::optional<std::int64_t> integer_in(const json& object, std::string_view name) {
  const json* value = find_in(object, name);
  if (!value || !value->is_number_integer()) return std::nullopt;
  return value->get<std::int64_t>();
}

}  // namespace

const json* FingerprintView::member(std::string_view name) const { return find_in(document_, name); }

const json* FingerprintView::member(std::string_view name, std::string_view sub) const {
  const json* object = member(name);
  return object ? find_in(*object, sub) : nullptr;
}

std::optional<std::string> FingerprintView::text(std::string_view name) const { return text_in(document_, name); }

std::optional<std::string> FingerprintView::kernel_release() const {
  if (auto release = text(key::kKernelRelease)) return release;
  if (const json* old = member(key::kOldKernel)) return text_in(*old, key::kOldKernelRelease);
  return std::nullopt;
}

std::optional<std::int64_t> FingerprintView::cpu_count() const { return integer_in(document_, key::kCpuCount); }

std::optional<std::int64_t> FingerprintView::memory_gib() const { return integer_in(document_, key::kMemoryGib); }

std::optional<double> FingerprintView::load_one_minute() const {
  const json* loadavg = member(key::kLoadavg);
  if (!loadavg || !loadavg->is_array() || loadavg->empty() || !loadavg->front().is_number()) return std::nullopt;
  return loadavg->front().get<double>();
}

std::optional<FingerprintPlan> FingerprintView::plan() const {
  const json* object = member(key::kPlan);
  if (!object || !object->is_object()) return std::nullopt;
  return FingerprintPlan{text_in(*object, key::plan::kPath), text_in(*object, key::plan::kRun),
                         text_in(*object, key::plan::kBlock), integer_in(*object, key::plan::kSession),
                         text_in(*object, key::plan::kPair), text_in(*object, key::plan::kPairUnit)};
}

std::optional<FingerprintSwprofile> FingerprintView::swprofile() const {
  const json* object = member(key::kSwprofile);
  if (!object || !object->is_object()) return std::nullopt;
  FingerprintSwprofile profile{text_in(*object, key::swprofile::kKernel), {},
                               text_in(*object, key::swprofile::kDtbSha256)};
  if (const json* words = find_in(*object, key::swprofile::kCmdline); words && words->is_array()) {
    for (const json& word : *words)
      if (word.is_string()) profile.cmdline.push_back(word.get<std::string>());
  }
  return profile;
}

std::map<std::string, std::string> FingerprintView::sysctl() const {
  std::map<std::string, std::string> settings;
  const json* object = member(key::kSysctl);
  if (!object || !object->is_object()) return settings;
  for (const auto& [name, value] : object->items()) settings[name] = value.is_string() ? value.get<std::string>() : value.dump();
  return settings;
}

}  // namespace kbench::sysinfo
