#include <gtest/gtest.h>

#include <string>

#include "sysinfo/fingerprint.h"
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
        "no_turbo", "boost", "loadavg", "os_release"}) {
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
    if (!data[hash].is_null()) EXPECT_EQ(data[hash].get<std::string>().size(), 64u) << hash;
  }
}
