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
  virtual void write(const store::SampleRow& sample) = 0;
  virtual void end() = 0;    // the JSON "]"
};

// "csv" | "json"; throws InputError naming --format otherwise. Writes nothing
// until begin(), so the format is checked before the store is opened.
std::unique_ptr<SampleWriter> make_sample_writer(const std::string& format, std::ostream& out);

}  // namespace kbench::report
