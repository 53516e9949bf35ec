#pragma once
// What makes two samples one row of a table: the benchmark, its effective
// parameters and the result class. hackbench with loops=40 and with loops=10
// are two rows, never pooled or compared with each other. compare, noise,
// trend and bisect key their rows by it, under the SUT where they have
// several.
#include <string>

#include "analysis/report_model.h"
#include "store/result_store.h"

namespace kbench::analysis {

struct RowIdentity {
  std::string benchmark;
  std::string params;  // params_text: canonical, so equal sets give equal keys
  std::string label;   // the result class's label, e.g. "mean (ns)"
  // Benchmarks by name, then parameters and labels in natural order
  // (loops=10 before loops=40).
  bool operator<(const RowIdentity& other) const;
  bool operator==(const RowIdentity& other) const = default;
};

RowIdentity row_identity(const store::SampleRow& sample);
// The identity of a row a comparison has built.
RowIdentity row_identity(const Row& row);

}  // namespace kbench::analysis
