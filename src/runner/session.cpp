#include "runner/session.h"

#include <optional>

#include "common/errors.h"
#include "common/records.h"
#include "runner/agent_invocation.h"
#include "runner/run_stream.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::runner {

namespace {

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
  if (run.settings.kernel_profile) args.push_back("--kernel-profile");
  return args;
}

// The agent's own word for why it refused its input: the message of its
// `error` record, else the last line it wrote to stderr.
std::string refusal_message(const RunStream& stream, const InvocationResult& invocation) {
  if (stream.agent_error()) return *stream.agent_error();
  std::string tail = invocation.stderr_tail;
  const auto newline = tail.rfind('\n');
  if (newline != std::string::npos) tail.erase(0, newline + 1);
  constexpr std::string_view kPrefix = "kbench-agent: ";
  if (tail.compare(0, kPrefix.size(), kPrefix) == 0) tail.erase(0, kPrefix.size());
  for (char& c : tail) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';  // one line, no terminal escapes
  }
  if (tail.empty()) return "kbench-agent refused its input (exit status 2) without saying why";
  return tail;
}

// The connection's own last word on the run (lava's: the job it was, its
// URL), when it ended the agent's stderr. The stored reason is what
// `session show` prints; the stderr tail is not shown, nor kept for a run
// that did not fail.
std::string run_account(const sut::Connection& connection, const std::string& stderr_tail) {
  const std::string prefix = connection.run_account_prefix();
  if (prefix.empty()) return "";
  const auto newline = stderr_tail.rfind('\n');
  std::string last = newline == std::string::npos ? stderr_tail : stderr_tail.substr(newline + 1);
  return last.starts_with(prefix) ? last : std::string();
}

}  // namespace

nlohmann::json fetch_fingerprint(sut::Connection& connection) {
  std::optional<nlohmann::json> fingerprint;
  std::optional<std::string> fault;
  const auto timeout = std::chrono::seconds(60);
  const auto result = invoke_agent(connection, {"fingerprint"}, timeout, [&](const nlohmann::json& json) {
    if (fault) return;
    try {
      const records::Record record = records::record_from_json(json);
      const auto* data = std::get_if<records::Fingerprint>(&record);
      if (!data) fault = "agent wrote a '" + std::string(records::type_of(record)) + "' record, not a fingerprint";
      else if (fingerprint) fault = "agent wrote two fingerprint records";
      else fingerprint = data->data;
    } catch (const records::BadRecord& bad) {
      fault = std::string("agent wrote a bad record: ") + bad.what();
    }
  });
  std::string reason = describe_failure(result);
  if (reason.empty() && fault) reason = *fault;
  if (reason.empty() && (!fingerprint || fingerprint->empty())) reason = "no fingerprint record";
  if (!reason.empty()) {
    const std::string text = "kbench-agent fingerprint on " + connection.describe() + " failed: " + reason +
                             (result.stderr_tail.empty() ? "" : " (" + result.stderr_tail + ")");
    if (result.exit_status == kExitInfrastructure) throw InfrastructureError(text);
    throw RunError(text);
  }
  return *fingerprint;
}

store::Sut sut_from_fingerprint(const nlohmann::json& fp, const std::string& name) {
  const sysinfo::FingerprintView view(fp);
  store::Sut sut;
  sut.hostname = view.hostname().value_or("");
  sut.name = name.empty() ? sut.hostname : name;
  sut.arch = view.arch().value_or("");
  sut.cpu_model = view.cpu_model().value_or("");
  // The agent writes null for a count it could not read: unknown, as when missing.
  sut.cpu_count = static_cast<int>(view.cpu_count().value_or(0));
  sut.memory_gib = view.memory_gib().value_or(0);
  sut.product_name = view.product_name().value_or("");
  return sut;
}

BenchmarkOutcome run_benchmark(sut::Connection& connection, store::ResultStore& store, std::int64_t session,
                               const BenchmarkRun& run, const std::string& cpus, Progress& progress) {
  const store::BenchmarkKey key{run.name, run.params};
  RunStream stream({run.name, run.params, run.settings.size, run.settings.warmups, run.settings.repeats,
                    run.catalogue_classes},
                   [&](int repeat, const std::vector<records::Sample>& samples) {
                     store.add_repeat(session, key, repeat, samples);
                     progress.repeat_done(repeat);
                   },
                   [&](const records::KernelProfile& profile) { store.add_kernel_profile(session, key, profile); });
  const std::chrono::milliseconds timeout = run.settings.timeout;
  const InvocationResult invocation = invoke_agent(connection, agent_run_args(run, cpus), timeout, std::ref(stream));
  const bool exited = !invocation.timed_out && invocation.signal == 0;

  if (exited && invocation.exit_status == kExitUsage) {
    // Bad input is the user's to fix, with the agent's message: no outcome
    // is recorded and no repeat kept, as if the benchmark had not started.
    store.discard_benchmark(session, key);
    progress.step_finished("refused by kbench-agent");
    throw InputError(run.name + ": " + refusal_message(stream, invocation));
  }
  if (exited && invocation.exit_status == 0 && !invocation.stream_fault) stream.check_complete();

  BenchmarkOutcome outcome{run.name, {}, stream.repeats_committed()};
  // The first fault in the stream explains the rest; a record the agent
  // wrote before a line that was not one came first.
  std::optional<std::string> reason = stream.fault();
  if (!reason && invocation.stream_fault) reason = invocation.stream_fault;
  const std::string failure = describe_failure(invocation);
  if (!reason && !failure.empty()) {
    reason = stream.agent_error() ? *stream.agent_error() + " (" + failure + ")" : failure;
  } else if (reason && !failure.empty() && failure != *reason) {
    *reason += " (" + failure + ")";
  }
  const std::string account = run_account(connection, invocation.stderr_tail);
  if (reason) {
    if (!account.empty() && reason->find(account) == std::string::npos) *reason += " (" + account + ")";
    outcome.outcome.status = store::OutcomeStatus::Failed;
    outcome.outcome.reason = *reason;
    outcome.outcome.stderr_tail = invocation.stderr_tail;
  } else if (stream.skip_reason()) {
    // Not the account: a skip's reason is the same in every session.
    outcome.outcome.status = store::OutcomeStatus::Skipped;
    outcome.outcome.reason = *stream.skip_reason();
  } else {
    // An ok outcome has no reason of its own: where the run was, if said.
    outcome.outcome.reason = account;
  }
  store.record_outcome(session, key, outcome.outcome);
  return outcome;
}

}  // namespace kbench::runner
