#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "sysinfo/fingerprint.h"
#include "sysinfo/fingerprint_view.h"
#include "sysinfo/sha256.h"

using kbench::sysinfo::sha256_hex;

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  const std::string text(1000, 'x');
  kbench::sysinfo::Sha256 hash;
  for (std::size_t i = 0; i < text.size(); i += 37) hash.update(std::string_view(text).substr(i, 37));
  EXPECT_EQ(hash.hex_digest(), sha256_hex(text));
}

TEST(Sysinfo, MemoryRoundsToWholeGib) {
  using kbench::sysinfo::kib_to_whole_gib;
  EXPECT_EQ(kib_to_whole_gib(24684092), 24);  // this VM: 23.54 GiB
  EXPECT_EQ(kib_to_whole_gib(16 * 1024 * 1024 - 300000), 16);
  EXPECT_EQ(kib_to_whole_gib(16 * 1024 * 1024 + 300000), 16);
  EXPECT_EQ(kib_to_whole_gib(0), 0);
}

TEST(Sysinfo, BracketedChoice) {
  using kbench::sysinfo::bracketed_choice;
  EXPECT_EQ(bracketed_choice("always [madvise] never"), "madvise");
  EXPECT_EQ(bracketed_choice("[always] madvise never"), "always");
  EXPECT_EQ(bracketed_choice("on"), "on");
}

TEST(Sysinfo, MissingFilesAreNotErrors) {
  EXPECT_FALSE(kbench::sysinfo::read_file("/nonexistent/kbench").has_value());
  EXPECT_FALSE(kbench::sysinfo::read_line("/nonexistent/kbench").has_value());
}

TEST(Sysinfo, FingerprintHasEveryKey) {
  const auto data = kbench::sysinfo::fingerprint();
  for (const char* key :
       {"hostname", "arch", "cpu_model", "cpu_count", "memory_kib", "memory_gib", "product_name",
        "kernel_release", "kernel_version", "cmdline", "kernel_config_sha256",
        "kernel_config_gz_sha256", "mitigations", "clocksource", "governor", "smt", "aslr", "thp",
        "no_turbo", "boost", "loadavg", "os_release", "device_tree_model"}) {
    EXPECT_TRUE(data.contains(key)) << key;
  }
  // Always readable on Linux.
  EXPECT_TRUE(data["arch"].is_string());
  EXPECT_TRUE(data["kernel_release"].is_string());
  ASSERT_TRUE(data["cpu_count"].is_number_integer());
  EXPECT_GE(data["cpu_count"].get<int>(), 1);
  ASSERT_TRUE(data["memory_kib"].is_number_integer());
  EXPECT_EQ(data["memory_gib"].get<std::int64_t>(),
            kbench::sysinfo::kib_to_whole_gib(data["memory_kib"].get<std::int64_t>()));
  for (const char* hash : {"kernel_config_sha256", "kernel_config_gz_sha256"}) {
    if (!data[hash].is_null()) {
      EXPECT_EQ(data[hash].get<std::string>().size(), 64u) << hash;
    }
  }
}

using kbench::sysinfo::FingerprintView;
using nlohmann::json;

TEST(FingerprintView, ReadsWhatTheAgentWrites) {
  const auto data = kbench::sysinfo::fingerprint();
  const FingerprintView view(data);
  EXPECT_EQ(view.kernel_release(), data["kernel_release"].get<std::string>());
  EXPECT_EQ(view.arch(), data["arch"].get<std::string>());
  EXPECT_EQ(view.cpu_count(), data["cpu_count"].get<std::int64_t>());
  EXPECT_EQ(view.memory_gib(), data["memory_gib"].get<std::int64_t>());
  ASSERT_NE(view.member("mitigations"), nullptr);
  EXPECT_EQ(*view.member("mitigations"), data["mitigations"]);
}

namespace {

// Every typed accessor finds nothing in `document`.
void expect_no_typed_member(const json& document) {
  const FingerprintView view(document);
  EXPECT_FALSE(view.kernel_release()) << document;
  EXPECT_FALSE(view.hostname()) << document;
  EXPECT_FALSE(view.cmdline()) << document;
  EXPECT_FALSE(view.sut_class()) << document;
  EXPECT_FALSE(view.cpus_allowed()) << document;
  EXPECT_FALSE(view.cpu_count()) << document;
  EXPECT_FALSE(view.memory_gib()) << document;
  EXPECT_FALSE(view.load_one_minute()) << document;
  EXPECT_FALSE(view.plan()) << document;
  EXPECT_FALSE(view.swprofile()) << document;
  EXPECT_TRUE(view.sysctl().empty()) << document;
}

}  // namespace

TEST(FingerprintView, MissingMembersAreNullopt) {
  const json empty = json::object();
  EXPECT_EQ(FingerprintView(empty).member("cmdline"), nullptr);
  EXPECT_EQ(FingerprintView(empty).member("mitigations", "meltdown"), nullptr);
  expect_no_typed_member(empty);
}

TEST(FingerprintView, ADocumentThatIsNoObjectHasNoMembers) {
  // What a store's unparsable fingerprint text parses to, and odd JSON.
  for (const json& document : {json(), json::array({1, 2}), json("kernel_release"), json(3)}) {
    EXPECT_EQ(FingerprintView(document).member("kernel_release"), nullptr) << document;
    expect_no_typed_member(document);
  }
}

TEST(FingerprintView, NullIsAStoredValueButNoTypedOne) {
  // The agent writes null for a source it could not read (no cpufreq, ...).
  const json document = {{"governor", nullptr}, {"cpu_count", nullptr}, {"cmdline", nullptr}};
  const FingerprintView view(document);
  ASSERT_NE(view.member("governor"), nullptr);
  EXPECT_TRUE(view.member("governor")->is_null());
  EXPECT_FALSE(view.text("governor"));
  EXPECT_FALSE(view.cpu_count());
  EXPECT_FALSE(view.cmdline());
}

TEST(FingerprintView, WrongTypesAreNullopt) {
  expect_no_typed_member({{"kernel_release", 6},
                          {"hostname", false},
                          {"cmdline", json::object()},
                          {"cpu_count", "4"},
                          {"memory_gib", 7.5},
                          {"sut_class", json::array()},
                          {"cpus_allowed", 3},
                          {"loadavg", "0.1 0.2 0.3"},
                          {"plan", "plans/x.yaml"},
                          {"swprofile", json::array()},
                          {"sysctl", "vm.swappiness=10"}});
}

TEST(FingerprintView, KernelReleaseOfTheFirstStores) {
  const json old = {{"kernel", {{"release", "5.15.0-91-generic"}}}};
  EXPECT_EQ(FingerprintView(old).kernel_release(), "5.15.0-91-generic");
  // The flat member wins; one that is not a string leaves the old one.
  const json both = {{"kernel_release", "6.12.1"}, {"kernel", {{"release", "5.15.0"}}}};
  EXPECT_EQ(FingerprintView(both).kernel_release(), "6.12.1");
  const json null_release = {{"kernel_release", nullptr}, {"kernel", {{"release", "5.15.0"}}}};
  EXPECT_EQ(FingerprintView(null_release).kernel_release(), "5.15.0");
  const json odd = {{"kernel", "5.15.0"}};
  EXPECT_FALSE(FingerprintView(odd).kernel_release());
  const json odd_release = {{"kernel", {{"release", 5}}}};
  EXPECT_FALSE(FingerprintView(odd_release).kernel_release());
}

TEST(FingerprintView, MemberOfAnObjectMember) {
  const json document = {{"mitigations", {{"meltdown", "Not affected"}, {"mds", nullptr}}}, {"smt", "on"}};
  const FingerprintView view(document);
  ASSERT_NE(view.member("mitigations", "meltdown"), nullptr);
  EXPECT_EQ(*view.member("mitigations", "meltdown"), "Not affected");
  ASSERT_NE(view.member("mitigations", "mds"), nullptr);
  EXPECT_TRUE(view.member("mitigations", "mds")->is_null());
  EXPECT_EQ(view.member("mitigations", "retbleed"), nullptr);
  EXPECT_EQ(view.member("smt", "on"), nullptr);
}

TEST(FingerprintView, LoadOfTheFirstMinute) {
  const json document = {{"loadavg", {1.5, 0.5, 0.25}}};
  EXPECT_EQ(FingerprintView(document).load_one_minute(), 1.5);
  const json integer = {{"loadavg", {2, 1, 0}}};
  EXPECT_EQ(FingerprintView(integer).load_one_minute(), 2.0);
  const json empty = {{"loadavg", json::array()}};
  EXPECT_FALSE(FingerprintView(empty).load_one_minute());
  const json unreadable = {{"loadavg", {nullptr, 1, 2}}};
  EXPECT_FALSE(FingerprintView(unreadable).load_one_minute());
}

TEST(FingerprintView, PlanMembers) {
  const json document = {{"plan", {{"path", "plans/x.yaml"}, {"run", "r1"}, {"session", 2}, {"block", "r1/2"}}}};
  const auto plan = FingerprintView(document).plan();
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->path, "plans/x.yaml");
  EXPECT_EQ(plan->run, "r1");
  EXPECT_EQ(plan->block, "r1/2");
  EXPECT_EQ(plan->session, 2);
  // An object of other types, or of none of the members, is still a plan.
  const json odd = {{"plan", {{"path", 1}, {"session", "2"}, {"run", nullptr}}}};
  const auto odd_plan = FingerprintView(odd).plan();
  ASSERT_TRUE(odd_plan);
  EXPECT_FALSE(odd_plan->path);
  EXPECT_FALSE(odd_plan->run);
  EXPECT_FALSE(odd_plan->block);
  EXPECT_FALSE(odd_plan->session);
}

TEST(FingerprintView, SwprofileAndSysctlDeclarations) {
  const json document = {{"swprofile", {{"kernel", "bzImage"}, {"cmdline", {"nosmt", 3, "mitigations=off"}}}},
                         {"sysctl", {{"kernel.randomize_va_space", "0"}, {"vm.swappiness", 10}}}};
  const FingerprintView view(document);
  const auto profile = view.swprofile();
  ASSERT_TRUE(profile);
  EXPECT_EQ(profile->kernel, "bzImage");
  EXPECT_EQ(profile->cmdline, (std::vector<std::string>{"nosmt", "mitigations=off"}));
  const std::map<std::string, std::string> sysctl{{"kernel.randomize_va_space", "0"}, {"vm.swappiness", "10"}};
  EXPECT_EQ(view.sysctl(), sysctl);
  const json words_as_text = {{"swprofile", {{"kernel", nullptr}, {"cmdline", "nosmt"}}}};
  const auto odd = FingerprintView(words_as_text).swprofile();
  ASSERT_TRUE(odd);
  EXPECT_FALSE(odd->kernel);
  EXPECT_TRUE(odd->cmdline.empty());
}
