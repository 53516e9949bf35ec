// Columns: sut, swprofile, session_uid, session_index, benchmark, params,
// result_class, unit, direction, repeat, value, sut_class; values in
// round-trip form.
#include "report/sample_export.h"

#include <nlohmann/json.hpp>
#include <ostream>

#include "report/format.h"

namespace kbench::report {

namespace {

class CsvSampleWriter : public SampleWriter {
 public:
  explicit CsvSampleWriter(std::ostream& out) : out_(out) {}
  void begin() override {
    out_ << "sut,swprofile,session_uid,session_index,benchmark,params,result_class,unit,direction,repeat,value,"
            "sut_class\n";
  }
  void write(const store::SampleRow& s, const std::string& session_uid) override {
    line_.clear();
    line_ += csv_field(s.sut) + ',' + csv_field(s.swprofile) + ',' + csv_field(session_uid) + ',' +
             std::to_string(s.session_index) + ',' + csv_field(s.benchmark) + ',' + csv_field(params_text(s.params)) +
             ',' + csv_field(s.result_class.name) + ',' + csv_field(s.result_class.unit) + ',' +
             std::string(kbench::to_string(s.result_class.better)) + ',' + std::to_string(s.repeat) + ',' +
             format_exact(s.value) + ',' + csv_field(s.sut_class) + '\n';
    out_ << line_;
  }
  void end() override {}

 private:
  std::ostream& out_;
  std::string line_;  // reused: one allocation for the whole export
};

// One array, written object by object. Values are doubles written in
// round-trip form.
class JsonSampleWriter : public SampleWriter {
 public:
  explicit JsonSampleWriter(std::ostream& out) : out_(out) {}
  void begin() override { out_ << "["; }
  void write(const store::SampleRow& s, const std::string& session_uid) override {
    nlohmann::ordered_json sample = {{"sut", s.sut},
                                     {"swprofile", s.swprofile},
                                     {"session_uid", session_uid},
                                     {"session_index", s.session_index},
                                     {"benchmark", s.benchmark},
                                     {"params", s.params},
                                     {"result_class", s.result_class.name},
                                     {"unit", s.result_class.unit},
                                     {"direction", std::string(kbench::to_string(s.result_class.better))},
                                     {"repeat", s.repeat},
                                     {"value", s.value},
                                     {"sut_class", s.sut_class}};
    out_ << (first_ ? "\n" : ",\n") << sample.dump();
    first_ = false;
  }
  void end() override { out_ << (first_ ? "]\n" : "\n]\n"); }

 private:
  std::ostream& out_;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<SampleWriter> make_csv_sample_writer(std::ostream& out) {
  return std::make_unique<CsvSampleWriter>(out);
}

std::unique_ptr<SampleWriter> make_json_sample_writer(std::ostream& out) {
  return std::make_unique<JsonSampleWriter>(out);
}

}  // namespace kbench::report
