// The controller's reading of an agent's stdout: the input is what a real
// child process writes to the pipe and exits 0, read by run_benchmark (the
// line splitting of invoke_agent, the records, the repeats stored into a real
// SQLite store). A stream is only ever a Failed or Ok outcome: any exception
// out of run_benchmark, a crash or a sanitizer report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "runner/progress.h"
#include "runner/session.h"
#include "store/result_store.h"
#include "sut/connection.h"

namespace {

using namespace kbench;

// Starts "the agent": a forked child that writes the fuzz input and exits.
class ReplayConnection : public sut::Connection {
 public:
  std::string stdout_bytes;

  std::string describe() const override { return "fuzz replay"; }

  sut::AgentProcess start_agent(const std::vector<std::string>&) override {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) std::abort();
    const pid_t pid = fork();
    if (pid < 0) std::abort();
    if (pid == 0) {
      setpgid(0, 0);
      close(out[0]);
      close(err[0]);
      std::size_t written = 0;
      while (written < stdout_bytes.size()) {
        const ssize_t n = write(out[1], stdout_bytes.data() + written, stdout_bytes.size() - written);
        if (n <= 0) _exit(1);
        written += static_cast<std::size_t>(n);
      }
      _exit(0);
    }
    setpgid(pid, pid);
    close(out[1]);
    close(err[1]);
    return {pid, out[0], err[0]};
  }
};

struct Fixture {
  // tmpfs: the store commits every repeat, and a disk flush per input would
  // cost most of the run.
  std::string path = "/dev/shm/kbench-fuzz-stream-" + std::to_string(getpid()) + ".db";
  std::unique_ptr<store::ResultStore> store;
  std::int64_t session = 0;
  std::FILE* devnull = std::fopen("/dev/null", "w");

  Fixture() {
    std::remove(path.c_str());
    store = store::open_store("sqlite://" + path, store::OpenMode::CreateIfMissing);
    store::Sut sut;
    sut.name = sut.hostname = "fuzz";
    session = store->begin_session({sut, "fuzz", nlohmann::json{{"hostname", "fuzz"}}, "2026-01-01T00:00:00Z"});
  }
  ~Fixture() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  }
};

Fixture& fixture() {
  static Fixture instance;
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Fixture& f = fixture();
  ReplayConnection connection;
  connection.stdout_bytes.assign(reinterpret_cast<const char*>(data), size);
  plan::BenchmarkSettings settings;
  settings.warmups = 0;
  settings.repeats = 2;
  settings.timeout = std::chrono::seconds(10);
  const runner::BenchmarkRun run{"syscall/getpid", Params{{"calls", "1000000"}}, settings};
  runner::Progress progress(f.devnull, /*live=*/false, 1);
  (void)runner::run_benchmark(connection, *f.store, f.session, run, "", progress);
  return 0;
}
