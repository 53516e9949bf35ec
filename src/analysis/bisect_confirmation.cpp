#include "analysis/bisect_confirmation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kbench::analysis {

SandwichVerdict judge_sandwich(const std::vector<SandwichRow>& rows) {
  SandwichVerdict result;
  if (rows.empty()) {
    result.why = "no rows to test";
    return result;
  }
  std::vector<std::string> regressed, undecided, unchanged, improved, untested;
  for (const auto& row : rows) {
    switch (row.verdict) {
      case Verdict::Regression: regressed.push_back(row.name); break;
      case Verdict::Undecided: undecided.push_back(row.name); break;
      case Verdict::Unchanged: unchanged.push_back(row.name); break;
      case Verdict::Improvement: improved.push_back(row.name); break;
      case Verdict::None:
        untested.push_back(row.note.empty() ? row.name : fmt::format("{} ({})", row.name, row.note));
        break;
    }
  }
  const auto join = [](const std::vector<std::string>& list) { return fmt::format("{}", fmt::join(list, ", ")); };
  if (regressed.size() == rows.size()) {
    result.confirmed = true;
    result.why = rows.size() == 1 ? fmt::format("{} a regression (R)", join(regressed))
                                  : fmt::format("every row a regression (R): {}", join(regressed));
    return result;
  }
  result.more_sessions_may_decide = !undecided.empty() && unchanged.empty() && improved.empty() && untested.empty();
  std::vector<std::string> parts;
  // Most telling first: a row that improved contradicts the search, one
  // unchanged denies the step, one undecided only lacks sessions.
  if (!improved.empty()) parts.push_back("improved (I): " + join(improved));
  if (!unchanged.empty()) parts.push_back("unchanged: " + join(unchanged));
  if (!undecided.empty()) parts.push_back("undecided (?): " + join(undecided));
  if (!untested.empty()) parts.push_back("not tested: " + join(untested));
  if (!regressed.empty()) parts.push_back("a regression (R): " + join(regressed));
  result.why = fmt::format("{}", fmt::join(parts, "; "));
  return result;
}

}  // namespace kbench::analysis
