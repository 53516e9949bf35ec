#include "analysis/row_identity.h"

#include "analysis/compare.h"
#include "common/params.h"

namespace kbench::analysis {

bool RowIdentity::operator<(const RowIdentity& other) const {
  if (benchmark != other.benchmark) return benchmark < other.benchmark;
  if (params != other.params) return natural_less(params, other.params);
  return natural_less(label, other.label);
}

RowIdentity row_identity(const store::SampleRow& sample) {
  return {sample.benchmark, params_text(sample.params), sample.result_class.label()};
}

RowIdentity row_identity(const Row& row) { return {row.benchmark, params_text(row.params), row.result_class.label()}; }

}  // namespace kbench::analysis
