#include "analysis/test_method.h"

#include "common/errors.h"
#include "common/spoken_list.h"

namespace kbench::analysis {

namespace {

struct Description {
  TestMethod method;
  std::string_view name;
  std::string_view title;
  bool p_values;
};

constexpr Description kMethods[] = {
    {TestMethod::Welch, "welch", "Welch's t-test", true},
    {TestMethod::MannWhitney, "mwu", "Mann-Whitney U test", true},
    {TestMethod::CiOverlap, "ci-overlap", "disjoint 95% confidence intervals of the means (ci-overlap)", false},
};

const Description& describe(TestMethod method) {
  for (const Description& description : kMethods) {
    if (description.method == method) return description;
  }
  return kMethods[0];  // unreachable: every enumerator is listed
}

}  // namespace

TestMethod parse_test_method(const std::string& text) {
  for (const Description& description : kMethods) {
    if (text == description.name) return description.method;
  }
  throw InputError("--method " + text + ": expected one of " + method_names());
}

std::string_view method_name(TestMethod method) { return describe(method).name; }
std::string_view method_title(TestMethod method) { return describe(method).title; }
bool gives_p_values(TestMethod method) { return describe(method).p_values; }

std::string method_names() { return comma_list(kMethods, &Description::name); }

}  // namespace kbench::analysis
