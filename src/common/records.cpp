#include "common/records.h"

#include <cmath>

#include "common/errors.h"

namespace kbench::records {

nlohmann::json to_json(const Sample& sample) {
  return {{"type", kSample},
          {"benchmark", sample.benchmark},
          {"resultclass", sample.result_class.name},
          {"unit", sample.result_class.unit},
          {"better", std::string(to_string(sample.result_class.better))},
          {"repeat", sample.repeat},
          {"value", sample.value}};
}

namespace {
const nlohmann::json& field(const nlohmann::json& record, const char* key,
                            nlohmann::json::value_t type) {
  const auto it = record.find(key);
  const bool number_ok = type == nlohmann::json::value_t::number_float && it != record.end() &&
                         it->is_number();
  const bool int_ok = type == nlohmann::json::value_t::number_integer && it != record.end() &&
                      it->is_number_integer();
  if (it == record.end() || !(it->type() == type || number_ok || int_ok)) {
    throw InputError(std::string("agent record ") + record.dump() + ": field '" + key +
                     "' missing or of the wrong type");
  }
  return *it;
}
}  // namespace

Sample sample_from_json(const nlohmann::json& record) {
  using vt = nlohmann::json::value_t;
  Sample s;
  s.benchmark = field(record, "benchmark", vt::string).get<std::string>();
  s.result_class.name = field(record, "resultclass", vt::string).get<std::string>();
  s.result_class.unit = field(record, "unit", vt::string).get<std::string>();
  const auto better = parse_better(field(record, "better", vt::string).get<std::string>());
  if (!better) throw InputError("agent record " + record.dump() + ": 'better' must be higher or lower");
  s.result_class.better = *better;
  s.repeat = field(record, "repeat", vt::number_integer).get<int>();
  s.value = field(record, "value", vt::number_float).get<double>();
  if (!std::isfinite(s.value)) throw InputError("agent record " + record.dump() + ": value is not finite");
  return s;
}

}  // namespace kbench::records
