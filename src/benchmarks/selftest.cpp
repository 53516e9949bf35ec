// selftest/*: deliberately misbehaving benchmarks that the test suite uses to
// prove that a crash, a non-zero exit, a hang or a leftover child (also one
// that left the agent's session) is isolated to its agent. Registered only when KBENCH_SELFTEST=1, so they never show up
// in a real catalogue or suite.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>

#include "benchmarks/benchmark.h"
#include "common/errors.h"

namespace kbench::bench {
namespace {

bool selftest_enabled() {
  const char* flag = std::getenv("KBENCH_SELFTEST");
  return flag && std::strcmp(flag, "1") == 0;
}

// What a misbehaving benchmark does in its `at`-th repeat.
enum class Misbehaviour { None, Crash, ExitNonZero, Hang, HangWithChild, EscapeSetsid, Throw };

class SelfTest final : public Benchmark {
 public:
  SelfTest(std::string name, Misbehaviour misbehaviour) : name_(std::move(name)), misbehaviour_(misbehaviour) {}

  std::string name() const override { return name_; }
  std::string description() const override { return "self-test benchmark for failure isolation (KBENCH_SELFTEST=1)"; }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec{"ms", "20", "20", "milliseconds each repeat sleeps; the value reported"}.integer(0, 3600000),
            ParamSpec{"at", "1", "1", "repeat (0-based) in which the benchmark misbehaves"}.integer(0, 1000000)};
  }
  std::vector<ResultClass> result_classes(const Params&) const override {
    return {{"sleep", "ms", Better::Lower}};
  }
  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    const auto ms = param_int(params, "ms");
    if (repeat_++ == param_int(params, "at")) misbehave();
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const double slept = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return {{result_classes(params).front(), slept}};
  }

 private:
  void misbehave() {
    switch (misbehaviour_) {
      case Misbehaviour::None:
        return;
      case Misbehaviour::Crash:
        std::fputs("selftest: about to crash\n", stderr);
        std::abort();
      case Misbehaviour::ExitNonZero:
        std::fputs("selftest: exiting with status 3\n", stderr);
        std::_Exit(3);
      case Misbehaviour::Throw:
        throw RunError("selftest: deliberate failure");
      case Misbehaviour::EscapeSetsid:
        escape_setsid();
        for (;;) pause();
      case Misbehaviour::HangWithChild:
        if (fork() == 0) {
          // A child that would outlive the agent if the group were not killed.
          for (;;) pause();
        }
        [[fallthrough]];
      case Misbehaviour::Hang:
        for (;;) pause();
    }
  }

  // A grandchild in a session and process group of its own, reparented away
  // from the benchmark, deaf to SIGTERM, SIGINT and SIGHUP: what a daemon
  // started by a benchmark looks like. Named kb-escapee for the tests.
  static void escape_setsid() {
    const pid_t child = fork();
    if (child == 0) {
      setsid();
      if (fork() == 0) {
        for (int deaf : {SIGTERM, SIGINT, SIGHUP}) signal(deaf, SIG_IGN);
        prctl(PR_SET_NAME, "kb-escapee");
        for (;;) pause();
      }
      _exit(0);
    }
    waitpid(child, nullptr, 0);
  }

  std::string name_;
  Misbehaviour misbehaviour_;
  int repeat_ = 0;
};

// The number in the file `file` names, read at every repeat. A relative path
// is taken from $KBENCH_BISECT_TREE (the checkout of the commit kbench
// bisect measures): on a local SUT the value then depends on the commit as a
// kernel's cost would, which is what the bisect tests need without building
// a kernel (docs/bisect.md).
long number_in_file(const std::string& benchmark, const Params& params) {
  std::string path = param_string(params, "file");
  const char* tree = std::getenv("KBENCH_BISECT_TREE");
  if (!path.empty() && path.front() != '/' && tree && *tree) path = std::string(tree) + "/" + path;
  std::ifstream in(path);
  long ms = -1;
  if (!(in >> ms) || ms < 0 || ms > 3600000) throw RunError(benchmark + ": " + path + ": expected a number of milliseconds");
  return ms;
}

// selftest/value-file: no measurement at all, a fixture for the tests of
// drivers (bisect) whose decisions must not depend on the machine's load:
// the file's number, spread by at most 1 % by the process id and the repeat
// (so that sessions, each a process of its own, differ a little, as a
// statistic on session means needs).
class ValueFile final : public Benchmark {
 public:
  std::string name() const override { return "selftest/value-file"; }
  std::string description() const override {
    return "self-test: reports the number a file holds (relative: in $KBENCH_BISECT_TREE), spread by at most 1 % "
           "(KBENCH_SELFTEST=1)";
  }
  std::vector<ParamSpec> params() const override {
    return {ParamSpec{"file", "DELAY_MS", "DELAY_MS", "file holding the milliseconds"}};
  }
  std::vector<ResultClass> result_classes(const Params&) const override { return {{"value", "ms", Better::Lower}}; }
  std::vector<Measurement> run_repeat(const Params& params, const Placement&) override {
    const long ms = number_in_file(name(), params);
    const double spread = static_cast<double>((getpid() + 3 * repeat_++) % 21 - 10) / 1000.0;
    return {{result_classes(params).front(), static_cast<double>(ms) * (1.0 + spread)}};
  }

 private:
  int repeat_ = 0;
};

struct RegisterSelfTests {
  RegisterSelfTests() {
    if (!selftest_enabled()) return;
    const std::pair<const char*, Misbehaviour> all[] = {
        {"selftest/sleep", Misbehaviour::None},         {"selftest/crash", Misbehaviour::Crash},
        {"selftest/exit", Misbehaviour::ExitNonZero},   {"selftest/throw", Misbehaviour::Throw},
        {"selftest/hang", Misbehaviour::Hang},          {"selftest/hang-child", Misbehaviour::HangWithChild},
        {"selftest/escape-setsid", Misbehaviour::EscapeSetsid},
    };
    Registry::instance().add("selftest/value-file", [] { return std::make_unique<ValueFile>(); });
    for (const auto& [name, misbehaviour] : all) {
      Registry::instance().add(name, [name = std::string(name), misbehaviour = misbehaviour] {
        return std::make_unique<SelfTest>(name, misbehaviour);
      });
    }
  }
};
const RegisterSelfTests register_self_tests;

}  // namespace
}  // namespace kbench::bench
