#include "benchmarks/repeat_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/errors.h"

namespace kbench::bench {

namespace {

using nlohmann::json;

// A child's line for a failure that happened outside its record stream.
constexpr const char* kInputError = "input_error";
constexpr const char* kFailure = "failure";

void write_line(int fd, std::string line) {
  line += '\n';
  const char* data = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) _exit(kExitFailure);  // the parent is gone: nobody to tell
    data += written;
    left -= std::size_t(written);
  }
}

[[noreturn]] void run_child(Benchmark& benchmark, const std::string& name, const Params& params,
                            const RunSettings& settings, int out) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int status = kExitFailure;
  try {
    status = run_benchmark(benchmark, name, params, settings, [out](const records::Record& record) {
      write_line(out, records::to_json(record).dump(-1, ' ', false, json::error_handler_t::replace));
    });
  } catch (const InputError& bad) {
    write_line(out, json{{kInputError, bad.what()}}.dump(-1, ' ', false, json::error_handler_t::replace));
    status = kExitUsage;
  } catch (const std::exception& failure) {
    write_line(out, json{{kFailure, failure.what()}}.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  // No exit handlers and no stdio flush: the parent's buffers are not ours.
  _exit(status);
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

// Passes one child's records on, renumbering its repeat as `repeat`.
class ChildStream {
 public:
  ChildStream(const records::BenchmarkStart& start, int repeat, bool& started,
              std::map<std::string, json>& sent_notes, const RecordWriter& write)
      : start_(start), repeat_(repeat), started_(started), sent_notes_(sent_notes), write_(write) {}

  void handle(const std::string& line) {
    json parsed = json::parse(line, nullptr, false);
    if (parsed.is_object() && parsed.contains(kInputError)) {
      input_error_ = parsed[kInputError].get<std::string>();
      return;
    }
    if (parsed.is_object() && parsed.contains(kFailure)) {
      failure_ = parsed[kFailure].get<std::string>();
      return;
    }
    records::Record record;
    try {
      record = records::record_from_json(parsed);
    } catch (const std::exception& bad) {
      failure_ = std::string("the process of a repeat wrote a bad record: ") + bad.what();
      return;
    }
    if (std::holds_alternative<records::BenchmarkStart>(record)) {
      start_once();
    } else if (auto* info = std::get_if<records::Info>(&record)) {
      const auto sent = sent_notes_.find(info->key);
      if (sent != sent_notes_.end() && sent->second == info->value) return;
      sent_notes_[info->key] = info->value;
      write_(record);
    } else if (auto* sample = std::get_if<records::Sample>(&record)) {
      sample->repeat = repeat_;
      write_(record);
    } else if (auto* end_of_repeat = std::get_if<records::RepeatEnd>(&record)) {
      end_of_repeat->repeat = repeat_;
      write_(record);
    } else if (auto* end = std::get_if<records::End>(&record)) {
      end_ = end->status;
    } else {
      write_(record);  // skipped, error
    }
  }

  void start_once() {
    if (!started_) write_(start_);
    started_ = true;
  }

  const std::optional<std::string>& input_error() const { return input_error_; }
  const std::optional<std::string>& failure() const { return failure_; }
  const std::optional<records::EndStatus>& end() const { return end_; }

 private:
  const records::BenchmarkStart& start_;
  int repeat_;
  bool& started_;
  std::map<std::string, json>& sent_notes_;
  const RecordWriter& write_;
  std::optional<std::string> input_error_, failure_;
  std::optional<records::EndStatus> end_;
};

}  // namespace

int run_benchmark_process_per_repeat(Benchmark& benchmark, const std::string& name, const Params& params,
                                     const RunSettings& settings, const RecordWriter& write) {
  const records::BenchmarkStart start = start_record(benchmark, name, params, settings);  // bad values: nothing written

  RunSettings one_repeat = settings;
  one_repeat.repeats = 1;
  one_repeat.process_per_repeat = false;
  bool started = false;
  std::map<std::string, json> sent_notes;
  auto fail = [&](const std::string& message, int exit_status) {
    if (!started) write(start);
    write(records::Error{name, message});
    write(records::End{name, records::EndStatus::Error});
    return exit_status;
  };

  for (int repeat = 0; repeat < settings.repeats; ++repeat) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno), kExitFailure);
    const pid_t child = fork();
    if (child < 0) {
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      return fail(std::string("fork: ") + std::strerror(errno), kExitFailure);
    }
    if (child == 0) {
      close(pipe_fds[0]);
      run_child(benchmark, name, params, one_repeat, pipe_fds[1]);
    }
    close(pipe_fds[1]);

    ChildStream stream(start, repeat, started, sent_notes, write);
    FILE* from_child = fdopen(pipe_fds[0], "r");
    if (!from_child) {
      close(pipe_fds[0]);
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
      return fail(std::string("fdopen: ") + std::strerror(errno), kExitFailure);
    }
    char* line = nullptr;
    std::size_t capacity = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, from_child)) > 0) {
      std::string text(line, std::size_t(length));
      if (text.back() == '\n') text.pop_back();
      stream.handle(text);
    }
    std::free(line);
    std::fclose(from_child);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }

    const std::string which = "repeat " + std::to_string(repeat);
    if (stream.input_error()) {
      if (!started) throw InputError(*stream.input_error());  // nothing written yet
      return fail(*stream.input_error(), kExitUsage);
    }
    if (stream.failure()) return fail(*stream.failure(), kExitFailure);
    if (!stream.end()) return fail("the process of " + which + " " + describe_wait_status(status) +
                                       " before it ended its records", kExitFailure);
    switch (*stream.end()) {
      case records::EndStatus::Ok:
        if (!WIFEXITED(status) || WEXITSTATUS(status) != kExitOk) {
          return fail("the process of " + which + " " + describe_wait_status(status), kExitFailure);
        }
        break;
      case records::EndStatus::Skipped:
        write(records::End{name, records::EndStatus::Skipped});
        return kExitOk;
      case records::EndStatus::Error:
        write(records::End{name, records::EndStatus::Error});
        return WIFEXITED(status) && WEXITSTATUS(status) == kExitUsage ? kExitUsage : kExitFailure;
    }
  }
  write(records::End{name, records::EndStatus::Ok});
  return kExitOk;
}

}  // namespace kbench::bench
