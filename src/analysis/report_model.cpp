#include "analysis/report_model.h"

#include <algorithm>

namespace kbench::analysis {

double signed_change(const Row& row, const Cell& cell, SignConvention sign) {
  const double raw = raw_change(row, cell);
  if (sign == SignConvention::Raw || row.result_class.better == Better::Higher) return raw;
  // Lower is better: a smaller value is a positive change. No change stays
  // +0: json and csv print -0 as "-0", which reads as a change.
  return raw == 0 ? 0.0 : -raw;
}

double raw_change(const Row& row, const Cell& cell) {
  if (!row.base_present || !cell.present) return stats::kNaN;
  return cell.change_pct;
}

bool Table::holds(const std::string& session_sut, const std::string& session_class) const {
  const bool machine =
      suts.empty() ? session_sut == sut : std::find(suts.begin(), suts.end(), session_sut) != suts.end();
  return machine && (sut_scope != SutScope::SutClass || session_class == sut_class);
}

}  // namespace kbench::analysis
