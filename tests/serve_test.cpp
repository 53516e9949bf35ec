// kbench serve's listen address: what counts as loopback decides whether
// the store is exposed to the network with or without a warning.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "serve/listen_address.h"

namespace kbench::serve {
namespace {

TEST(ServeListen, ParsesHostAndPort) {
  const auto v4 = parse_listen_address("127.0.0.1:8080");
  EXPECT_EQ(v4.host, "127.0.0.1");
  EXPECT_EQ(v4.port, 8080);
  const auto v6 = parse_listen_address("[::1]:0");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 0);
  EXPECT_EQ(parse_listen_address("localhost:65535").port, 65535);
  EXPECT_EQ(parse_listen_address(kDefaultListen).host, "127.0.0.1");
}

TEST(ServeListen, RefusesWhatIsNotHostColonPort) {
  for (const char* bad : {"", "127.0.0.1", ":8080", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:65536",
                          "127.0.0.1:-1", "::1:8080", "[::1]8080", "[nohost]:80", "127.0.0.1:123456"}) {
    EXPECT_THROW(parse_listen_address(bad), InputError) << bad;
  }
  try {
    parse_listen_address("::1:8080");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("[ADDRESS]:PORT"), std::string::npos) << e.what();
  }
}

TEST(ServeListen, LoopbackIsOnlyThisMachine) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "localhost"}) {
    EXPECT_TRUE(is_loopback(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "::ffff:10.0.0.1", "lab.example.org",
                           "128.0.0.1"}) {
    EXPECT_FALSE(is_loopback(host)) << host;
  }
}

TEST(ServeListen, UrlBracketsIpv6) {
  EXPECT_EQ(url_of("127.0.0.1", 8080), "http://127.0.0.1:8080/");
  EXPECT_EQ(url_of("::1", 41000), "http://[::1]:41000/");
}

}  // namespace
}  // namespace kbench::serve
