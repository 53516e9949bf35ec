#pragma once
// The significance test of a comparison: one value per statistical assumption
// about the samples (as benchstat's benchmath has one type per assumption),
// parsed once from --method; its names live only in test_method.cpp.
#include <string>
#include <string_view>
#include <vector>

namespace kbench::analysis {

enum class TestMethod {
  Welch,        // means of roughly normal samples, unequal variances: Welch's t-test
  MannWhitney,  // no distribution assumed: Mann-Whitney U rank test
  CiOverlap,    // the field's habit: disjoint 95% CIs of the means; no p-value
};

// "welch" | "mwu" | "ci-overlap"; throws InputError "--method <text>: expected ...".
TestMethod parse_test_method(const std::string& text);

// The name --method takes and machine-readable output prints: "welch", "mwu", "ci-overlap".
std::string_view method_name(TestMethod method);

// The name a legend prints: "Welch's t-test", ...
std::string_view method_title(TestMethod method);

// Whether the method gives p-values (and so takes part in FDR control).
bool gives_p_values(TestMethod method);

// Every method's name, in --help order: "welch, mwu, ci-overlap".
std::string method_names();

// nlohmann::json (and ordered_json) write a method as its name.
template <typename Json>
void to_json(Json& json, TestMethod method) {
  json = std::string(method_name(method));
}

}  // namespace kbench::analysis
