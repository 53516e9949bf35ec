#pragma once
// `kbench export`: every stored sample, unrounded, as CSV or a JSON array.
// The store streams the samples, so a writer takes them one at a time and a
// large store never sits in memory.
#include <iosfwd>
#include <memory>
#include <string>

#include "store/result_store.h"

namespace kbench::report {

class SampleWriter {
 public:
  virtual ~SampleWriter() = default;
  virtual void begin() = 0;  // the CSV header, the JSON "["
  // `session_uid`: the session's identity in every store (the row id is one
  // store's own), so a merged session exports the same on both sides.
  virtual void write(const store::SampleRow& sample, const std::string& session_uid) = 0;
  virtual void end() = 0;    // the JSON "]"
};

// The samples view of the formats csv and json (report/format_table.h). A
// writer writes nothing until begin().
std::unique_ptr<SampleWriter> make_csv_sample_writer(std::ostream& out);
std::unique_ptr<SampleWriter> make_json_sample_writer(std::ostream& out);

}  // namespace kbench::report
