#pragma once
// Where `kbench serve` listens: --listen HOST:PORT.
#include <string>

namespace kbench::serve {

// Loopback only; 8080 is the port people expect of a local web tool, and
// --listen 127.0.0.1:0 picks a free one when it is taken.
inline constexpr const char* kDefaultListen = "127.0.0.1:8080";

struct ListenAddress {
  std::string host;  // as given, without brackets: 127.0.0.1, ::1, localhost, 0.0.0.0
  int port = 0;      // 0: any free port
};

// HOST:PORT, [IPV6]:PORT. Throws InputError "--listen '...': expected ...".
ListenAddress parse_listen_address(const std::string& text);

// Only this machine can connect: 127.0.0.0/8, ::1, ::ffff:127.x.y.z or
// "localhost". Any other name may resolve to an address others can reach.
bool is_loopback(const std::string& host);

// http://HOST:PORT/ with an IPv6 host in brackets.
std::string url_of(const std::string& host, int port);

}  // namespace kbench::serve
