#include "benchmarks/harness.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "common/errors.h"
#include "timing/affinity.h"
#include "timing/clock.h"
#include "tracing/sampler.h"

namespace kbench::bench {

namespace {

// Context switches the kernel forced on the agent so far: a repeat with many
// was disturbed by other work on its CPU.
long involuntary_switches() {
  rusage usage{};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_nivcsw : 0;
}

// The 1-minute load average, when above the number of online CPUs, as a
// warning worth storing with the samples.
std::optional<std::string> busy_warning() {
  double load[1] = {0};
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (getloadavg(load, 1) != 1 || cpus <= 0 || load[0] <= double(cpus)) return std::nullopt;
  char text[128];
  std::snprintf(text, sizeof text, "machine busy: 1-minute load average %.2f on %ld online CPUs", load[0], cpus);
  return std::string(text);
}

// Sends the notes that are new or changed since `already_sent`.
void write_notes(const RecordWriter& write, const std::string& name, const std::map<std::string, std::string>& notes,
                 const std::map<std::string, std::string>& already_sent) {
  for (const auto& [key, value] : notes) {
    const auto sent = already_sent.find(key);
    if (sent != already_sent.end() && sent->second == value) continue;
    write(records::Info{name, key, value});
  }
}

// Messages come from benchmarks and the tools they run, and may span lines;
// the protocol carries one-line text (a reader shows it in one line).
std::string one_line(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text.empty() ? "(no message)" : text;
}

std::string number_text(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// The record of what the sampler took, its functions cut to the record's
// cap (the most sampled kept).
records::KernelProfile profile_record(const std::string& name, const tracing::KernelProfile& profile) {
  records::KernelProfile record;
  record.benchmark = name;
  record.period_ns = profile.period_ns;
  record.samples = profile.samples;
  record.lost = profile.lost;
  record.unresolved = profile.unresolved;
  std::vector<std::pair<std::string, std::uint64_t>> ranked(profile.functions.begin(), profile.functions.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    if (i < records::kMaxProfileFunctions) {
      record.functions.insert(ranked[i]);
    } else {
      record.unlisted += ranked[i].second;
    }
  }
  return record;
}

// The sampler of a --kernel-profile run: made before prepare(), so that the
// threads and children a benchmark starts there inherit its events.
class ProfileSession {
 public:
  explicit ProfileSession(bool wanted) {
    if (!wanted) return;
    try {
      sampler_.emplace();
    } catch (const tracing::ProfileUnavailable& unavailable) {
      unavailable_ = unavailable.what();
    }
  }
  void start() {
    if (sampler_) sampler_->start();
  }
  void stop() {
    if (!sampler_) return;
    sampler_->stop();
    sampler_->drain();
  }
  // The record ending the run (nullopt when no profile was asked for).
  std::optional<records::KernelProfile> record(const std::string& name) {
    if (!sampler_ && !unavailable_) return std::nullopt;
    if (sampler_) {
      try {
        return profile_record(name, sampler_->profile(tracing::KernelSymbols::load()));
      } catch (const tracing::ProfileUnavailable& unavailable) {
        unavailable_ = unavailable.what();
      }
    }
    records::KernelProfile record;
    record.benchmark = name;
    record.unavailable = one_line(*unavailable_);
    return record;
  }

 private:
  std::optional<tracing::KernelSampler> sampler_;
  std::optional<std::string> unavailable_;
};

}  // namespace

std::vector<Measurement> checked(const std::vector<Measurement>& measured, const std::vector<ResultClass>& declared) {
  std::vector<Measurement> ordered;
  for (const auto& rc : declared) {
    int found = 0;
    for (const auto& m : measured) {
      if (m.result_class != rc) continue;
      ++found;
      if (!std::isfinite(m.value)) {
        throw RunError("result class '" + rc.label() + "' has the non-finite value " + number_text(m.value));
      }
      if (m.value < 0 && records::unit_cannot_be_negative(rc.unit)) {
        throw RunError("result class '" + rc.label() + "' has the negative value " + number_text(m.value) +
                       ", impossible in " + rc.unit);
      }
      ordered.push_back(m);
    }
    if (found != 1) {
      throw RunError("result class '" + rc.label() + "' reported " + std::to_string(found) +
                     " times in one repeat, expected once");
    }
  }
  for (const auto& m : measured) {
    if (std::find(declared.begin(), declared.end(), m.result_class) == declared.end()) {
      throw RunError("undeclared result class '" + m.result_class.label() + "' reported");
    }
  }
  return ordered;
}

int run_benchmark(Benchmark& benchmark, const std::string& name, const Params& params, const RunSettings& settings,
                  const RecordWriter& write) {
  records::BenchmarkStart start;
  start.benchmark = name;
  start.params = params;
  start.size = settings.size;
  if (settings.where.cpu >= 0) start.cpu = settings.where.cpu;
  start.warmups = settings.warmups;
  start.repeats = settings.repeats;
  start.result_classes = benchmark.result_classes(params);  // throws InputError for bad values: nothing written
  const auto& declared = start.result_classes;

  auto finish_with = [&](records::EndStatus status, int exit_code) {
    write(records::End{name, status});
    return exit_code;
  };

  bool started = false;
  ProfileSession profiling(settings.kernel_profile);
  try {
    try {
      benchmark.prepare(params, settings.where);
    } catch (const InputError&) {
      benchmark.finish();
      throw;  // bad parameter value: exit 2 with stdout still empty
    }
    write(start);
    started = true;
    write(records::Info{name, "affinity", timing::current_affinity()});
    if (const auto warning = busy_warning()) write(records::Info{name, "busy", *warning});
    const auto notes_after_prepare = benchmark.notes();
    write_notes(write, name, notes_after_prepare, {});

    for (int i = 0; i < settings.warmups; ++i) checked(benchmark.run_repeat(params, settings.where), declared);
    for (int repeat = 0; repeat < settings.repeats; ++repeat) {
      profiling.start();
      const double began = timing::monotonic_seconds();
      const long switches_before = involuntary_switches();
      const auto measured = checked(benchmark.run_repeat(params, settings.where), declared);
      const double seconds = timing::monotonic_seconds() - began;
      const long switches = involuntary_switches() - switches_before;
      profiling.stop();
      for (const auto& m : measured) write(records::Sample{name, m.result_class, repeat, m.value});
      write(records::RepeatEnd{name, repeat, std::max(seconds, 0.0), std::max(switches, 0L)});
    }
    write_notes(write, name, benchmark.notes(), notes_after_prepare);
    benchmark.finish();
    if (auto profile = profiling.record(name)) write(*profile);
    return finish_with(records::EndStatus::Ok, kExitOk);
  } catch (const SkipBenchmark& skip) {
    benchmark.finish();
    if (!started) write(start);
    write(records::Skipped{name, one_line(skip.what())});
    return finish_with(records::EndStatus::Skipped, kExitOk);
  } catch (const InputError& bad) {
    if (!started) throw;
    // A parameter only found bad mid-run: the stream has begun, so close it.
    benchmark.finish();
    write(records::Error{name, one_line(bad.what())});
    return finish_with(records::EndStatus::Error, kExitUsage);
  } catch (const std::exception& failure) {
    benchmark.finish();
    if (!started) write(start);
    write(records::Error{name, one_line(failure.what())});
    return finish_with(records::EndStatus::Error, kExitFailure);
  }
}

}  // namespace kbench::bench
