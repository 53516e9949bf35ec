#include "runner/session.h"


#include "common/errors.h"
#include "common/records.h"
#include "runner/agent_invocation.h"

namespace kbench::runner {

namespace {

std::string json_string(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> agent_run_args(const BenchmarkRun& run, const std::string& cpus) {
  std::vector<std::string> args = {"run", "--benchmark", run.name,
                                   "--warmups", std::to_string(run.settings.warmups),
                                   "--repeats", std::to_string(run.settings.repeats),
                                   "--size", run.settings.size};
  for (const auto& [key, value] : run.params) {
    args.push_back("--param");
    args.push_back(key + "=" + value);
  }
  if (!cpus.empty()) {
    args.push_back("--cpus");
    args.push_back(cpus);
  }
  return args;
}

// Consumes one agent's records: samples are committed per repeat.
class RecordSink {
 public:
  RecordSink(store::ResultStore& store, std::int64_t session, const BenchmarkRun& run, Progress& progress)
      : store_(store), session_(session), key_{run.name, run.params}, progress_(progress) {}

  void operator()(const nlohmann::json& record) {
    const std::string type = json_string(record, "type");
    if (type == records::kBenchmark) {
      // The controller computed the effective parameters from the catalogue;
      // an agent that disagrees would file samples under another benchmark key.
      if (const auto params = record.find("params"); params != record.end() && params->is_object()) {
        Params reported;
        for (const auto& [k, v] : params->items()) reported[k] = v.is_string() ? v.get<std::string>() : v.dump();
        if (reported != key_.params) error_ = "the agent ran other parameters than the controller computed";
      }
    } else if (type == records::kSample) {
      try {
        pending_.push_back(records::sample_from_json(record));
      } catch (const InputError& bad_record) {
        // Never unwind out of the reader: the agent still has to be reaped.
        error_ = bad_record.what();
      }
    } else if (type == records::kRepeatEnd) {
      if (!pending_.empty() && !error_) {
        try {
          store_.add_repeat(session_, key_, pending_.front().repeat, pending_);
          ++repeats_stored_;
          progress_.repeat_done(pending_.front().repeat);
        } catch (const RunError& refused) {
          // The store rolled the repeat back; the benchmark is marked failed.
          error_ = refused.what();
        }
      }
      pending_.clear();
    } else if (type == records::kSkipped) {
      skip_reason_ = json_string(record, "reason");
    } else if (type == records::kError) {
      error_ = json_string(record, "message");
    }
  }

  const store::BenchmarkKey& key() const { return key_; }
  int repeats_stored() const { return repeats_stored_; }
  const std::optional<std::string>& skip_reason() const { return skip_reason_; }
  const std::optional<std::string>& error() const { return error_; }

 private:
  store::ResultStore& store_;
  std::int64_t session_;
  store::BenchmarkKey key_;
  std::vector<records::Sample> pending_;  // the repeat in flight
  int repeats_stored_ = 0;
  std::optional<std::string> skip_reason_;
  std::optional<std::string> error_;
  Progress& progress_;
};

}  // namespace

nlohmann::json fetch_fingerprint(sut::Connection& connection) {
  nlohmann::json fingerprint;
  const auto result = invoke_agent(connection, {"fingerprint"}, std::chrono::seconds(60),
                                   [&](const nlohmann::json& record) {
                                     if (json_string(record, "type") == records::kFingerprint) {
                                       fingerprint = record.value("data", nlohmann::json::object());
                                     }
                                   });
  if (result.exit_status != 0 || !fingerprint.is_object() || fingerprint.empty()) {
    std::string reason = describe_failure(result, std::chrono::seconds(60));
    if (reason.empty()) reason = "no fingerprint record";
    throw RunError("kbench-agent fingerprint on " + connection.describe() + " failed: " + reason +
                   (result.stderr_tail.empty() ? "" : " (" + result.stderr_tail + ")"));
  }
  return fingerprint;
}

store::Sut sut_from_fingerprint(const nlohmann::json& fp, const std::string& name) {
  store::Sut sut;
  sut.hostname = json_string(fp, "hostname");
  sut.name = name.empty() ? sut.hostname : name;
  sut.arch = json_string(fp, "arch");
  sut.cpu_model = json_string(fp, "cpu_model");
  sut.cpu_count = fp.value("cpu_count", 0);
  sut.memory_gib = fp.value("memory_gib", std::int64_t{0});
  sut.product_name = json_string(fp, "product_name");
  return sut;
}

BenchmarkOutcome run_benchmark(sut::Connection& connection, store::ResultStore& store, std::int64_t session,
                               const BenchmarkRun& run, const std::string& cpus, Progress& progress) {
  RecordSink sink(store, session, run, progress);
  const std::chrono::milliseconds timeout = run.settings.timeout;
  const InvocationResult invocation = invoke_agent(connection, agent_run_args(run, cpus), timeout, std::ref(sink));

  BenchmarkOutcome outcome{run.name, {}, sink.repeats_stored()};
  const std::string failure = describe_failure(invocation, timeout);
  if (!failure.empty() || sink.error()) {
    outcome.outcome.status = store::OutcomeStatus::Failed;
    outcome.outcome.reason = sink.error() ? *sink.error() : failure;
    if (sink.error() && !failure.empty()) outcome.outcome.reason += " (" + failure + ")";
    outcome.outcome.stderr_tail = invocation.stderr_tail;
  } else if (sink.skip_reason()) {
    outcome.outcome.status = store::OutcomeStatus::Skipped;
    outcome.outcome.reason = *sink.skip_reason();
  }
  store.record_outcome(session, sink.key(), outcome.outcome);
  return outcome;
}

}  // namespace kbench::runner
