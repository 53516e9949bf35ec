#include <algorithm>
#include <stdexcept>

#include "common/errors.h"
#include "sut/method.h"

namespace kbench::sut {

std::string Method::param_names() const {
  std::string out;
  for (const auto& spec : params) out += (out.empty() ? "" : ", ") + spec.name;
  return out;
}

std::optional<ParamProblem> Method::problem_with(const Params& given) const {
  for (const auto& [key, value] : given) {
    const auto declared =
        std::find_if(params.begin(), params.end(), [&key = key](const ParamSpec& spec) { return spec.name == key; });
    if (declared == params.end()) {
      return ParamProblem{key, params.empty() ? "no parameters (the " + name + " method takes none), got '" + key + "'"
                                              : "a parameter of the " + name + " method (" + param_names() +
                                                    "), got '" + key + "'"};
    }
    if (!param_value_is_valid(*declared, value)) {
      return ParamProblem{key, describe_expected(*declared) + ", got '" + value + "'"};
    }
  }
  return check_params ? check_params(given) : std::nullopt;
}

void Method::require_valid(const Params& given) const {
  if (const auto problem = problem_with(given)) {
    throw InputError("sut.connection.params." + problem->key + ": expected " + problem->expected);
  }
}

MethodRegistry& MethodRegistry::instance() {
  static MethodRegistry registry;
  return registry;
}

void MethodRegistry::add(Method method) {
  if (find(method.name)) throw std::logic_error("SUT connection method registered twice: " + method.name);
  methods_.push_back(std::move(method));
  std::sort(methods_.begin(), methods_.end(), [](const Method& a, const Method& b) { return a.name < b.name; });
}

const Method* MethodRegistry::find(std::string_view name) const {
  for (const auto& method : methods_) {
    if (method.name == name) return &method;
  }
  return nullptr;
}

const Method& MethodRegistry::get(std::string_view name) const {
  if (const Method* method = find(name)) return *method;
  throw InputError("sut.connection.method: expected " + spoken_list(names()) + ", got '" + std::string(name) + "'");
}

std::vector<std::string> MethodRegistry::names() const {
  return names_where([](const Method&) { return true; });
}

std::vector<std::string> MethodRegistry::names_where(const std::function<bool(const Method&)>& keep) const {
  std::vector<std::string> out;
  for (const auto& method : methods_) {
    if (keep(method)) out.push_back(method.name);
  }
  return out;
}

std::vector<std::string> MethodRegistry::names_with(Capability c) const {
  return names_where([c](const Method& method) { return method.has(c); });
}

std::unique_ptr<Connection> make_connection(std::string_view method, const Params& params,
                                            const SwprofileKernel* swprofile) {
  const Method& found = MethodRegistry::instance().get(method);
  found.require_valid(params);
  return found.make(params, found.has(Capability::BootsKernel) ? swprofile : nullptr);
}

}  // namespace kbench::sut
