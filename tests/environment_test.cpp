// Environment differences between the sessions of two profiles: the pure
// function on hand-made fingerprints, and add_environment_differences on a
// real SQLite store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/environment.h"
#include "store/result_store.h"
#include "support/test_files.h"

namespace kbench::analysis {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A quiet machine as the agent fingerprints it, first session of its run.
json quiet_fingerprint() {
  return json{{"kernel_release", "6.19.0"},
              {"cmdline", "BOOT_IMAGE=/vmlinuz-6.19.0 root=/dev/vda1 quiet"},
              {"thp", "madvise"},
              {"governor", "performance"},
              {"smt", "on"},
              {"mitigations", {{"meltdown", "Not affected"}, {"spectre_v2", "Mitigation: Retpolines"}}},
              {"clocksource", "tsc"},
              {"no_turbo", 0},
              {"boost", nullptr},
              {"aslr", 2},
              {"cpu_count", 4},
              {"loadavg", {0.10, 0.20, 0.30}}};
}

ProfileSessions side(const std::string& name, std::vector<json> fingerprints) {
  ProfileSessions result{name, std::move(fingerprints), {}};
  result.declared = declarations_of(result.fingerprints);
  return result;
}

TEST(EnvironmentDifferences, IdenticalSessionsHaveNone) {
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint(), quiet_fingerprint()}),
                                      side("patched", {quiet_fingerprint()})),
              IsEmpty());
}

TEST(EnvironmentDifferences, UndeclaredSettingIsListedWithBothValues) {
  json patched = quiet_fingerprint();
  patched["thp"] = "always";
  patched["governor"] = nullptr;  // no cpufreq: a value, not "unknown"
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {patched})),
              ElementsAre("thp: base madvise, patched always", "governor: base performance, patched unreadable"));
}

TEST(EnvironmentDifferences, MixedSidesCountTheirSessions) {
  json always = quiet_fingerprint();
  always["thp"] = "always";
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint(), always, quiet_fingerprint()}),
                                      side("patched", {always})),
              ElementsAre("thp: base always in 1 of 3 sessions / madvise in 2 of 3 sessions, patched always"));
}

TEST(EnvironmentDifferences, KeyAnOlderKbenchDidNotRecordIsNotCompared) {
  json patched = quiet_fingerprint();
  patched["microcode"] = "0xf0";  // the base sessions predate the key
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {patched})), IsEmpty());
}

TEST(EnvironmentDifferences, CmdlineWordsOnOneSideOnly) {
  json patched = quiet_fingerprint();
  patched["cmdline"] = "BOOT_IMAGE=/vmlinuz-6.19.0 root=/dev/vda1 nohz_full=1";
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {patched})),
              ElementsAre("cmdline: only base has quiet; only patched has nohz_full=1"));
}

TEST(EnvironmentDifferences, WhatTheSwprofileDeclaresIsLeftOut) {
  // A plan swprofile with its own kernel, mitigations=off on the command line
  // and a sysctl: the differences they cause are the point of the comparison.
  json patched = quiet_fingerprint();
  patched["kernel_release"] = "6.19.0-patched";
  patched["cmdline"] = "BOOT_IMAGE=/vmlinuz-patched root=/dev/vda1 quiet mitigations=off";
  patched["mitigations"]["spectre_v2"] = "Vulnerable";
  patched["aslr"] = 0;
  patched["swprofile"] = {{"kernel", "/boot/vmlinuz-patched"}, {"cmdline", {"mitigations=off"}}};
  patched["sysctl"] = {{"kernel.randomize_va_space", "0"}};
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {patched})), IsEmpty());
  // The same fingerprints from `kbench run` profiles, which declare nothing.
  patched.erase("swprofile");
  patched.erase("sysctl");
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {patched})),
              ElementsAre("cmdline: only base has BOOT_IMAGE=/vmlinuz-6.19.0; only patched has "
                          "BOOT_IMAGE=/vmlinuz-patched mitigations=off",
                          "kernel_release: base 6.19.0, patched 6.19.0-patched",
                          "mitigations/spectre_v2: base Mitigation: Retpolines, patched Vulnerable",
                          "aslr: base 2, patched 0"));
}

// Two boards (or two firmware versions) give the same kernel two device
// trees; a swprofile that boots with its own dtb declares that difference.
TEST(EnvironmentDifferences, TheDeviceTreeModelIsDeclaredByTheSwprofilesDtb) {
  json base = quiet_fingerprint();
  base["device_tree_model"] = "linux,dummy-virt";
  json patched = base;
  patched["device_tree_model"] = "kbench marked virt";
  EXPECT_THAT(environment_differences(side("base", {base}), side("patched", {patched})),
              ElementsAre("device_tree_model: base linux,dummy-virt, patched kbench marked virt"));
  patched["swprofile"] = {{"kernel", "/boot/Image + dtb /boot/marked.dtb"},
                          {"cmdline", json::array()},
                          {"dtb_sha256", std::string(64, 'a')}};
  patched["kernel_release"] = base["kernel_release"];
  EXPECT_THAT(environment_differences(side("base", {base}), side("patched", {patched})), IsEmpty());
}

TEST(EnvironmentDifferences, ManyMitigationsBecomeOneLine) {
  json base = quiet_fingerprint();
  json patched = quiet_fingerprint();
  for (const char* name : {"mds", "l1tf", "retbleed", "srbds"}) {
    base["mitigations"][name] = "Mitigation: Clear CPU buffers";
    patched["mitigations"][name] = "Vulnerable";
  }
  EXPECT_THAT(environment_differences(side("base", {base}), side("patched", {patched})),
              ElementsAre(HasSubstr("mitigations: 4 entries differ (l1tf, mds, retbleed, srbds)")));
}

TEST(EnvironmentDifferences, BusyAtTheStartOfARunIsListed) {
  json busy = quiet_fingerprint();
  busy["loadavg"] = json::array({2.5, 1.0, 0.5});  // >= half of 4 CPUs
  busy["plan"] = {{"session", 0}};
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {busy, quiet_fingerprint()})),
              ElementsAre("load: base quiet, patched busy (1-minute load 2.50 on 4 CPUs at the start of 1 of 2 runs)"));
  // Below half the CPUs is quiet.
  busy["loadavg"][0] = 1.9;
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {busy})), IsEmpty());
}

TEST(EnvironmentDifferences, LaterSessionsOfARunCarryKbenchsOwnLoad) {
  // Session 2 of a run starts right after session 1's benchmarks: its
  // 1-minute load is kbench's own, not a busy machine.
  json second = quiet_fingerprint();
  second["loadavg"] = json::array({3.5, 1.0, 0.5});
  second["plan"] = {{"session", 1}};
  EXPECT_THAT(environment_differences(side("base", {quiet_fingerprint()}), side("patched", {second})), IsEmpty());
}

// ---------------------------------------------------------------------------
// From a real store

store::Sut lab_machine(const std::string& name = "lab-1") {
  store::Sut sut;
  sut.name = name;
  sut.hostname = name + ".example";
  sut.arch = "x86_64";
  sut.cpu_model = "Test CPU";
  sut.cpu_count = 4;
  sut.memory_gib = 8;
  sut.product_name = "VM";
  return sut;
}

std::int64_t session_with_sample(store::ResultStore& store, const std::string& profile, const json& fingerprint,
                                 const std::string& sut = "lab-1") {
  const std::int64_t id = store.begin_session({lab_machine(sut), profile, fingerprint, "2026-11-29T12:00:00Z", {}, ""});
  store.add_repeat(id, {"syscall/getpid", {}}, 0, {records::Sample{"", ResultClass{"mean", "ns", Better::Lower}, 0, 100}});
  return id;
}

Table table_for(const std::string& sut, const std::string& base, std::vector<std::string> tests) {
  Table table;
  table.sut = sut;
  table.base_profile = base;
  table.test_profiles = std::move(tests);
  return table;
}

TEST(AddEnvironmentDifferences, ReadsTheFingerprintsOfEachTablesSut) {
  kbench::testing::TempDir dir;
  auto store = store::open_store("sqlite://" + (dir.path() / "results.db").string(), store::OpenMode::CreateIfMissing);
  json always = quiet_fingerprint();
  always["thp"] = "always";
  json smt_off = quiet_fingerprint();
  smt_off["smt"] = "off";
  session_with_sample(*store, "base", quiet_fingerprint());
  session_with_sample(*store, "patched", always);
  session_with_sample(*store, "v2", smt_off);
  // Another machine's sessions and a session that stored nothing stay out.
  session_with_sample(*store, "patched", smt_off, "lab-2");
  store->begin_session({lab_machine(), "base", smt_off, "2026-11-29T12:00:00Z", {}, ""});

  Report report;
  report.tables.push_back(table_for("lab-1", "base", {"patched", "v2"}));
  add_environment_differences(report, *store);
  EXPECT_THAT(report.tables[0].environment_differences,
              ElementsAre("thp: base madvise, patched always", "smt: base on, v2 off"));
}

}  // namespace
}  // namespace kbench::analysis
