#include "runner/run_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/errors.h"

namespace kbench::runner {

namespace {

// Text from the agent as shown in a reason: at most `max` bytes, cut at a
// character boundary. A misbehaving agent must not fill the store and the
// terminal with a megabyte of name.
std::string shorten(std::string_view text, std::size_t max = 80) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... ({} bytes)", text.substr(0, cut), text.size());
}

std::string params_text(const Params& params) {
  std::string out;
  for (const auto& [key, value] : params) out += (out.empty() ? "" : ", ") + key + "=" + value;
  return fmt::format("{{{}}}", shorten(out, 400));
}

// A benchmark's own error or skip message, as stored and shown.
constexpr std::size_t kMaxReasonBytes = 2000;

}  // namespace

RunStream::RunStream(ExpectedRun expected, RepeatCommitter commit, ProfileCommitter keep_profile)
    : expected_(std::move(expected)), commit_(std::move(commit)), keep_profile_(std::move(keep_profile)) {}

void RunStream::fail(std::string reason) {
  if (fault_) return;
  fault_ = std::move(reason);
  pending_.clear();  // nothing of a broken repeat is stored
  pending_labels_.clear();
}

void RunStream::on_record(const nlohmann::json& json) {
  if (fault_) return;
  try {
    handle(records::record_from_json(json));
  } catch (const records::BadRecord& bad) {
    fail(std::string("agent wrote a bad record: ") + bad.what());
  }
}

void RunStream::handle(const records::Record& record) {
  const std::string_view type = records::type_of(record);
  if (std::holds_alternative<records::Fingerprint>(record)) {
    return fail("agent wrote a 'fingerprint' record in the middle of a run");
  }
  if (end_) return fail(fmt::format("agent wrote a '{}' record after its 'end' record", type));
  if (records::benchmark_of(record) != expected_.benchmark) {
    return fail(fmt::format("agent wrote a '{}' record for benchmark '{}' while running '{}'", type,
                            shorten(records::benchmark_of(record)), expected_.benchmark));
  }
  if (const auto* start = std::get_if<records::BenchmarkStart>(&record)) return handle_start(*start);
  if (!start_) return fail(fmt::format("agent wrote a '{}' record before the 'benchmark' record", type));
  if (const auto* sample = std::get_if<records::Sample>(&record)) return handle_sample(*sample);
  if (const auto* repeat_end = std::get_if<records::RepeatEnd>(&record)) return handle_repeat_end(*repeat_end);
  if (const auto* end = std::get_if<records::End>(&record)) return handle_end(*end);
  if (const auto* profile = std::get_if<records::KernelProfile>(&record)) return handle_profile(*profile);
  if (const auto* skipped = std::get_if<records::Skipped>(&record)) {
    if (skip_reason_ || agent_error_) return fail("agent wrote a second 'skipped' or 'error' record");
    skip_reason_ = shorten(skipped->reason, kMaxReasonBytes);
  } else if (const auto* error = std::get_if<records::Error>(&record)) {
    if (skip_reason_ || agent_error_) return fail("agent wrote a second 'skipped' or 'error' record");
    agent_error_ = shorten(error->message, kMaxReasonBytes);
  }
  // `info` carries facts for a reader; nothing in it needs checking here.
  if (skip_reason_ || agent_error_) {
    // The repeat in flight will not be finished: its samples go.
    pending_.clear();
    pending_labels_.clear();
  }
}

void RunStream::handle_start(const records::BenchmarkStart& start) {
  if (start_) return fail("agent wrote a second 'benchmark' record");
  // The controller computed the effective parameters from the catalogue; an
  // agent that disagrees would file samples under another benchmark key.
  if (start.params != expected_.params) {
    return fail(fmt::format("agent ran {} with the parameters {}, not the {} asked for", expected_.benchmark,
                            params_text(start.params), params_text(expected_.params)));
  }
  if (start.size != expected_.size || start.warmups != expected_.warmups || start.repeats != expected_.repeats) {
    return fail(fmt::format("agent ran {} with size {}, {} warmups and {} repeats, not the {}, {} and {} asked for",
                            expected_.benchmark, start.size, start.warmups, start.repeats, expected_.size,
                            expected_.warmups, expected_.repeats));
  }
  if (!expected_.catalogue_classes.empty()) {
    for (const auto& declared : start.result_classes) {
      const bool known = std::any_of(expected_.catalogue_classes.begin(), expected_.catalogue_classes.end(),
                                     [&](const ResultClass& rc) {
                                       return rc.unit == declared.unit && rc.better == declared.better;
                                     });
      if (!known) {
        return fail(fmt::format("agent declares the result class '{}' ({} is better), unlike every result class "
                                "of {} in the catalogue",
                                shorten(declared.label()), to_string(declared.better), expected_.benchmark));
      }
    }
  }
  start_ = start;
}

void RunStream::handle_sample(const records::Sample& sample) {
  if (skip_reason_ || agent_error_) {
    return fail(fmt::format("agent wrote a 'sample' record after its '{}' record", skip_reason_ ? "skipped" : "error"));
  }
  const auto& declared = start_->result_classes;
  if (std::find(declared.begin(), declared.end(), sample.result_class) == declared.end()) {
    return fail(fmt::format("agent reported the undeclared result class '{}' ({} is better) in repeat {}",
                            shorten(sample.result_class.label()), to_string(sample.result_class.better),
                            sample.repeat));
  }
  if (sample.repeat != next_repeat_) {
    return fail(fmt::format("agent wrote a sample of repeat {} where repeat {} was due", sample.repeat, next_repeat_));
  }
  if (next_repeat_ >= expected_.repeats) {
    return fail(fmt::format("agent wrote a sample of repeat {} of a run of {} repeats", sample.repeat,
                            expected_.repeats));
  }
  if (!pending_labels_.insert(sample.result_class.label()).second) {
    return fail(fmt::format("agent reported '{}' twice in repeat {}", shorten(sample.result_class.label()),
                            sample.repeat));
  }
  pending_.push_back(sample);
}

void RunStream::handle_repeat_end(const records::RepeatEnd& end) {
  if (skip_reason_ || agent_error_) {
    return fail(fmt::format("agent wrote a 'repeat_end' record after its '{}' record",
                            skip_reason_ ? "skipped" : "error"));
  }
  if (end.repeat != next_repeat_) {
    return fail(fmt::format("agent ended repeat {} where repeat {} was due", end.repeat, next_repeat_));
  }
  if (next_repeat_ >= expected_.repeats) {
    return fail(fmt::format("agent ended repeat {} of a run of {} repeats", end.repeat, expected_.repeats));
  }
  for (const auto& rc : start_->result_classes) {
    if (!pending_labels_.count(rc.label())) {
      return fail(fmt::format("agent ended repeat {} without the result class '{}'", end.repeat, shorten(rc.label())));
    }
  }
  if (pending_.empty()) return fail(fmt::format("agent ended repeat {} without any sample", end.repeat));
  try {
    commit_(end.repeat, pending_);
  } catch (const RunError& refused) {
    // The store rolled the repeat back; the benchmark is marked failed.
    return fail(refused.what());
  }
  ++next_repeat_;
  pending_.clear();
  pending_labels_.clear();
}

void RunStream::handle_profile(const records::KernelProfile& profile) {
  if (profile_seen_) return fail("agent wrote a second 'kernel_profile' record");
  profile_seen_ = true;
  // The agent writes it after the last repeat: a profile of part of the
  // repeats would not be the run's.
  if (next_repeat_ != expected_.repeats) {
    return fail(fmt::format("agent wrote a 'kernel_profile' record after {} of {} repeats", next_repeat_,
                            expected_.repeats));
  }
  if (!keep_profile_) return;
  try {
    keep_profile_(profile);
  } catch (const RunError& refused) {
    return fail(refused.what());
  }
}

void RunStream::handle_end(const records::End& end) {
  switch (end.status) {
    case records::EndStatus::Ok:
      if (skip_reason_ || agent_error_) {
        return fail(fmt::format("agent ended with status ok after its '{}' record", skip_reason_ ? "skipped" : "error"));
      }
      if (!pending_.empty()) {
        return fail(fmt::format("agent ended with status ok in the middle of repeat {}", next_repeat_));
      }
      if (next_repeat_ != expected_.repeats) {
        return fail(fmt::format("agent ended with status ok after {} of {} repeats", next_repeat_, expected_.repeats));
      }
      break;
    case records::EndStatus::Skipped:
      if (!skip_reason_) return fail("agent ended with status skipped without a 'skipped' record");
      break;
    case records::EndStatus::Error:
      if (!agent_error_) return fail("agent ended with status error without an 'error' record");
      break;
  }
  end_ = end.status;
}

void RunStream::check_complete() {
  if (fault_) return;
  if (!start_) return fail("agent exited with status 0 without writing a 'benchmark' record");
  if (!end_) {
    return fail(fmt::format("agent exited with status 0 without an 'end' record (after {} of {} repeats)",
                            next_repeat_, expected_.repeats));
  }
  if (*end_ == records::EndStatus::Error) {
    // The agent's exit status contradicts its own report: trust the failure.
    return fail("agent exited with status 0 after its 'error' record: " + *agent_error_);
  }
}

}  // namespace kbench::runner
