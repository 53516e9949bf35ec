// A plan that boots the machine kbench runs on, without booting it: the
// state kept between boots, the resume unit's text, the panic= word every
// boot gets, the plan's refusals and `kbench plan status` from a store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "deploy/deployer.h"
#include "plan/plan.h"
#include "runner/local_boot.h"
#include "runner/plan_executor.h"
#include "runner/plan_status.h"
#include "runner/sysctl.h"
#include "store/result_store.h"
#include "support/scoped_env.h"
#include "support/test_files.h"

namespace kbench::runner {
namespace {

using ::testing::HasSubstr;
using kbench::testing::ScopedEnv;

LocalBootState state_with_pending() {
  LocalBootState state;
  state.plan = "/srv/plans/ab.yaml";
  state.plan_key = "/srv/plans/ab.yaml";
  state.store = "sqlite:///srv/kbench.db";
  state.run = "2026-12-04T10:00:00Z-4242";
  state.identity = "0123456789abcdef";
  state.unit = resume_unit_name(state.plan_key);
  state.log = "/var/lib/kbench/local-boot/x.log";
  state.original = {"6.1.0-57-cloud-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1", "root=/dev/vda rw quiet",
                    "5e1c", "/boot/vmlinuz-6.1.0-57-cloud-amd64", "/boot/initrd.img-6.1.0-57-cloud-amd64", {}};
  state.boots = 3;
  deploy::LaunchedBoot boot;
  boot.number = 3;
  boot.swprofile = "panics";
  boot.method = "kexec";
  boot.started_at = "2026-12-04T10:05:00Z";
  boot.started_epoch = 1796378700;
  boot.old_boot_id = "0c0ffee";
  boot.expected = {"6.12.118+deb12-cloud-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.12.118-1~deb12u1"};
  boot.cmdline = {"rdinit=/nonexistent", "root=/dev/nonexistent", "panic=10"};
  state.pending = PendingBoot{boot, 1};
  return state;
}

TEST(LocalBootState, RoundTripsThroughItsFile) {
  testing::TempDir dir;
  ScopedEnv state_dir("KBENCH_STATE_DIR", dir.path().c_str());
  const LocalBootState state = state_with_pending();
  const std::string path = local_boot_state_path(state.plan_key);
  EXPECT_EQ(std::filesystem::path(path).parent_path(), dir.path() / "local-boot");
  EXPECT_FALSE(read_local_boot_state(path).has_value());
  write_local_boot_state(path, state);
  const auto read = read_local_boot_state(path);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->to_json(), state.to_json());
  ASSERT_TRUE(read->pending.has_value());
  EXPECT_EQ(read->pending->plan_session, 1);
  EXPECT_EQ(read->pending->boot.expected.release, "6.12.118+deb12-cloud-amd64");
  EXPECT_EQ(read->pending->boot.cmdline.back(), "panic=10");
  EXPECT_EQ(read->original.initrd, "/boot/initrd.img-6.1.0-57-cloud-amd64");
  EXPECT_FALSE(std::filesystem::exists(path + ".part"));

  LocalBootState done = state;
  done.pending.reset();
  write_local_boot_state(path, done);
  EXPECT_FALSE(read_local_boot_state(path)->pending.has_value());
}

TEST(LocalBootState, AFinishedPlanLeavesWhereItsResultsWent) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "k.done").string();
  EXPECT_EQ(read_local_boot_done_store(path), "");
  write_local_boot_done(path, "sqlite:///srv/kbench.db", "run-1");
  EXPECT_EQ(read_local_boot_done_store(path), "sqlite:///srv/kbench.db");
}

TEST(LocalBootState, ABrokenFileIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "state.json").string();
  std::ofstream(path) << "{\"plan\": \"/p.yaml\"}";
  try {
    read_local_boot_state(path);
    FAIL() << "a state without its keys was read";
  } catch (const RunError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the local boot state " + path + ": expected plan, plan_key"));
  }
  std::ofstream(path) << "not json";
  EXPECT_THROW(read_local_boot_state(path), RunError);
}

TEST(LocalBootState, FilesAndUnitAreNamedByThePlanKey) {
  EXPECT_EQ(local_boot_key("/srv/plans/ab.yaml").size(), 12u);
  EXPECT_NE(local_boot_key("/srv/plans/ab.yaml"), local_boot_key("/srv/plans/cd.yaml"));
  EXPECT_EQ(resume_unit_name("/srv/plans/ab.yaml"), "kbench-resume-" + local_boot_key("/srv/plans/ab.yaml") + ".service");
}

TEST(LocalBootPanic, EveryBootRebootsOnAPanic) {
  using deploy::with_panic_reboot;
  using V = std::vector<std::string>;
  EXPECT_EQ(with_panic_reboot({"root=/dev/vda", "quiet"}), (V{"root=/dev/vda", "quiet", "panic=10"}));
  EXPECT_EQ(with_panic_reboot({}), (V{"panic=10"}));
  // A panic= that reboots already is kept; the kernel takes the last word.
  EXPECT_EQ(with_panic_reboot({"panic=30"}), (V{"panic=30"}));
  EXPECT_EQ(with_panic_reboot({"panic=-1"}), (V{"panic=-1"}));
  EXPECT_EQ(with_panic_reboot({"panic=5", "panic=0"}), (V{"panic=5", "panic=0", "panic=10"}));
  EXPECT_EQ(with_panic_reboot({"panic=soon"}), (V{"panic=soon", "panic=10"}));
  EXPECT_EQ(deploy::hanging_panic_word({"quiet", "panic=0"}), "panic=0");
  EXPECT_EQ(deploy::hanging_panic_word({"panic=0", "panic=3"}), "");
  EXPECT_EQ(deploy::hanging_panic_word({"quiet"}), "");
}

TEST(LocalBootUnit, ResumesThePlanWithAbsolutePathsAndAppendsToItsLog) {
  ResumeUnit unit;
  unit.name = "kbench-resume-0123456789ab.service";
  unit.plan = "/srv/plans/ab.yaml";
  unit.command = {"/usr/local/bin/kbench", "plan", "exec", "/srv/plans/a b%1.yaml", "--store",
                  "sqlite:///srv/kbench.db", "--resume", "--cpus", "$HOME"};
  unit.environment = {{"KBENCH_STATE_DIR", "/root/.local/state/kbench"}};
  unit.log = "/root/.local/state/kbench/local-boot/0123456789ab.log";
  const std::string text = resume_unit_text(unit);
  EXPECT_THAT(text, HasSubstr("\nType=exec\n"));
  EXPECT_THAT(text, HasSubstr("\nEnvironment=KBENCH_STATE_DIR=/root/.local/state/kbench\n"));
  // Quotes around a word with a space; '%' and '$' doubled: systemd would
  // expand them.
  EXPECT_THAT(text, HasSubstr("\nExecStart=/usr/local/bin/kbench plan exec \"/srv/plans/a b%%1.yaml\" --store "
                              "sqlite:///srv/kbench.db --resume --cpus \"$$HOME\"\n"));
  EXPECT_THAT(text, HasSubstr("\nStandardOutput=append:/root/.local/state/kbench/local-boot/0123456789ab.log\n"));
  EXPECT_THAT(text, HasSubstr("\nStandardError=append:/root/.local/state/kbench/local-boot/0123456789ab.log\n"));
  EXPECT_THAT(text, HasSubstr("\n[Install]\nWantedBy=multi-user.target\n"));
}

TEST(LocalBootMachine, NeedsSystemdAndRoot) {
  testing::TempDir dir;
  EXPECT_THAT(local_boot_obstacle((dir.path() / "none").string(), true),
              HasSubstr("this machine does not run systemd (no " + (dir.path() / "none").string() + ")"));
  EXPECT_THAT(local_boot_obstacle(dir.path().string(), false), HasSubstr("need root"));
  EXPECT_EQ(local_boot_obstacle(dir.path().string(), true), "");
  EXPECT_EQ(volatile_folder("/tmp/plans/ab.yaml"), "/tmp");
  EXPECT_EQ(volatile_folder("/run/user/0/x.db"), "/run");
  EXPECT_EQ(volatile_folder("/tmpfs/ab.yaml"), "");
  EXPECT_EQ(volatile_folder("/var/tmp/ab.yaml"), "");
}

// An absolute plan path outside /tmp: a relative one would resolve against
// the test's working directory, which is in /tmp for a checkout there.
constexpr const char* kPlanPath = "/srv/plans/p.yaml";

std::string select_error(const std::string& yaml) {
  const plan::Plan plan = plan::parse_plan(yaml, kPlanPath);
  try {
    select_swprofiles(plan, ExecOptions{});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(LocalBootPlan, IsAcceptedAndItsFaultsAreNamed) {
  const std::string sut = "sut: {name: me, connection: {method: local}, boot: {method: kexec}}\n";
  const auto plan = plan::parse_plan(sut + "swprofiles: [{name: a, kernel: {release: 6.1.0-57-cloud-amd64}}]\n"
                                           "benchmarks: [syscall/getppid]\n",
                                     "p.yaml");
  ASSERT_TRUE(plan.sut && plan.sut->boot);
  EXPECT_EQ(plan.sut->method, "local");
  EXPECT_EQ(select_error(sut + "swprofiles: [{name: a, kernel: {release: r1}, cmdline: [quiet, panic=0]}]\n"
                               "benchmarks: [syscall/getppid]\n"),
            std::string(kPlanPath) +
                ":2: swprofile a: cmdline 'panic=0' leaves a panicked kernel hanging, and this machine has no "
                "power_cycle to recover; leave it out (kbench adds panic=10 to each boot here) or give a panic=N "
                "that reboots");
  EXPECT_EQ(select_error(sut + "swprofiles: [{name: a, kernel: {deb: /tmp/a.deb}}]\nbenchmarks: [syscall/getppid]\n"),
            std::string(kPlanPath) +
                ":2: swprofile a: kernel file /tmp/a.deb is in /tmp, which a boot empties; the run resumed after "
                "the boot would not find it");
  // The machine's own faults: this one's, whichever it has.
  const std::string machine = select_error(sut + "swprofiles: [{name: a, kernel: {release: r1}}]\n"
                                                 "benchmarks: [syscall/getppid]\n");
  const std::string obstacle = local_boot_obstacle(kSystemdRunDir, geteuid() == 0);
  EXPECT_EQ(machine,
            obstacle.empty() ? "" : std::string(kPlanPath) + ":1: sut.boot with connection local: " + obstacle);
  const auto plan_error = [](const std::string& yaml) {
    try {
      plan::parse_plan(yaml, "p.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(plan_error("sut: {connection: {method: local}, boot: {method: kexec, power_cycle: ipmitool}}\n"
                       "benchmarks: [a/b]\n"),
            "p.yaml:1: sut.boot.power_cycle: expected no power_cycle with connection local (nothing outside the "
            "machine waits for its boots: a kernel that panics reboots it, and the run after the boot judges it)");
  EXPECT_EQ(plan_error("sut: {connection: {method: qemu}, boot: {method: kexec}}\nbenchmarks: [a/b]\n"),
            "p.yaml:1: sut.boot: expected sut.connection.method local or ssh (kbench boots kernels on ssh SUTs and "
            "on the machine it runs on)");
}

store::BootRecord boot_of(const std::string& swprofile, const std::string& run, int plan_session, int number,
                          bool ok) {
  store::BootRecord boot;
  boot.sut = "me";
  boot.swprofile = swprofile;
  boot.plan_key = "/srv/plans/ab.yaml";
  boot.run = run;
  boot.plan_session = plan_session;
  boot.number = number;
  boot.method = "kexec";
  boot.started_at = "2026-12-04T10:00:00Z";
  boot.seconds = 52;
  boot.ok = ok;
  boot.release = ok ? "6.12.118+deb12-cloud-amd64" : "6.1.0-57-cloud-amd64";
  boot.reason = ok ? "" : "this machine came back 61s after the kexec into panics on its own kernel";
  return boot;
}

void measured_session(store::ResultStore& store, const std::string& swprofile, const std::string& run, int s) {
  store::SessionStart start;
  start.sut.name = "me";
  start.sut.hostname = "me";
  start.sut.arch = "x86_64";
  start.swprofile = swprofile;
  start.fingerprint = {{"kernel_release", "6.12.118+deb12-cloud-amd64"},
                       {"plan", {{"key", "/srv/plans/ab.yaml"}, {"run", run}, {"session", s}, {"identity", "x"}}}};
  start.started_at = "2026-12-04T10:01:00Z";
  store.finish_session(store.begin_session(start));
}

plan::Plan ab_plan() {
  plan::Plan plan = plan::parse_plan(
      "sut: {name: me, connection: {method: local}, boot: {method: kexec}}\n"
      "swprofiles: [{name: a, kernel: {release: ra}}, {name: b, kernel: {release: rb}}, "
      "{name: panics, kernel: {release: ra}}]\n"
      "benchmarks: [syscall/getppid]\n"
      "defaults: {benchmark: {sessions: 2}}\n",
      "ab.yaml");
  plan.path = "/srv/plans/ab.yaml";
  return plan;
}

TEST(PlanStatus, BetweenBootsShowsTheBootInFlightAndTheUnit) {
  testing::TempDir dir;
  ScopedEnv state_dir("KBENCH_STATE_DIR", dir.path().c_str());
  const std::string url = "sqlite://" + (dir.path() / "s.db").string();
  auto store = store::open_store(url, store::OpenMode::CreateIfMissing);
  LocalBootState state = state_with_pending();
  write_local_boot_state(local_boot_state_path(state.plan_key), state);
  measured_session(*store, "a", state.run, 0);
  measured_session(*store, "b", state.run, 0);
  store->record_boot(boot_of("a", state.run, 0, 1, true));
  store->record_boot(boot_of("b", state.run, 0, 2, true));
  store->record_boot(boot_of("a", "an older run", 0, 1, true));

  PlanStatus status = gather_plan_status(ab_plan(), "/srv/plans/ab.yaml", store.get(), url, /*ask_systemd=*/false);
  status.unit_state = "enabled, inactive";
  status.now_epoch = state.pending->boot.started_epoch + 40;
  EXPECT_EQ(plan_status_text(status),
            "plan: /srv/plans/ab.yaml\n"
            "store: " + url + "\n"
            "run: 2026-12-04T10:00:00Z-4242\n"
            "status: waiting for boot 3/6 (panics by kexec), started 2026-12-04T10:05:00Z (40s ago); " +
                state.unit + " resumes the plan after it\n"
            "sessions: a 1/2, b 1/2, panics 0/2\n"
            "boots: 2 (2 ok, 0 failed)\n"
            "  boot 1    a                    kexec   ok 6.12.118+deb12-cloud-amd64 (52s)\n"
            "  boot 2    b                    kexec   ok 6.12.118+deb12-cloud-amd64 (52s)\n"
            "pending: boot 3: panics by kexec since 2026-12-04T10:05:00Z, expecting 6.12.118+deb12-cloud-amd64 "
            "#1 SMP PREEMPT_DYNAMIC Debian 6.12.118-1~deb12u1\n"
            "unit: " + state.unit + ": enabled, inactive\n"
            "log: " + local_boot_log_path(state.plan_key) + "\n");

  // The boot happened and the run resumed after it failed before recording
  // it: the plan waits for no one.
  status.unit_state = "enabled, failed";
  EXPECT_EQ(plan_status_word(status), "stopped: the run resumed after the last boot failed (its log: " +
                                          local_boot_log_path(state.plan_key) +
                                          "); `kbench plan exec /srv/plans/ab.yaml --resume` continues it");
}

TEST(PlanStatus, FinishedWhenEverySessionIsMeasuredOrItsKernelFailed) {
  testing::TempDir dir;
  ScopedEnv state_dir("KBENCH_STATE_DIR", dir.path().c_str());
  const std::string url = "sqlite://" + (dir.path() / "s.db").string();
  auto store = store::open_store(url, store::OpenMode::CreateIfMissing);
  const std::string run = "run-1";
  int number = 0;
  for (int s = 0; s < 2; ++s) {
    for (const char* name : {"a", "b"}) {
      measured_session(*store, name, run, s);
      store->record_boot(boot_of(name, run, s, ++number, true));
    }
    if (s == 0) store->record_boot(boot_of("panics", run, 0, ++number, false));
  }
  auto back = boot_of("(the SUT's own kernel)", run, -1, ++number, true);
  back.release = "6.1.0-57-cloud-amd64";
  store->record_boot(back);

  PlanStatus status = gather_plan_status(ab_plan(), "/srv/plans/ab.yaml", store.get(), url, /*ask_systemd=*/false);
  status.unit_state = "not installed";
  const std::string text = plan_status_text(status);
  EXPECT_EQ(plan_status_word(status), "finished");
  EXPECT_THAT(text, HasSubstr("\nsessions: a 2/2, b 2/2, panics 0/2 (its kernel failed to boot in session 1)\n"));
  EXPECT_THAT(text, HasSubstr("\nboots: 6 (5 ok, 1 failed)\n"));
  EXPECT_THAT(text, HasSubstr("\n  boot 3    panics               kexec   FAILED: this machine came back 61s"));
  EXPECT_THAT(text, HasSubstr("\n  boot back (the SUT's own kernel) kexec   ok 6.1.0-57-cloud-amd64"));
  EXPECT_THAT(text, HasSubstr("\npending: no boot\nunit: " + resume_unit_name("/srv/plans/ab.yaml") +
                              ": not installed\n"));

  // One session short, and nothing in flight: stopped, and how to go on.
  testing::TempDir other;
  auto partial = store::open_store("sqlite://" + (other.path() / "p.db").string(), store::OpenMode::CreateIfMissing);
  measured_session(*partial, "a", run, 0);
  const PlanStatus stopped = gather_plan_status(ab_plan(), "/srv/plans/ab.yaml", partial.get(), "p", false);
  EXPECT_EQ(plan_status_word(stopped),
            "stopped: 5 session(s) left; `kbench plan exec /srv/plans/ab.yaml --resume` continues it");
  EXPECT_EQ(plan_status_word(gather_plan_status(ab_plan(), "/srv/plans/ab.yaml", nullptr, "p", false)),
            "not started: the store has no run of this plan");
}

}  // namespace
}  // namespace kbench::runner
