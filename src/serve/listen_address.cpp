#include "serve/listen_address.h"

#include <arpa/inet.h>

#include <cstring>

#include "common/errors.h"

namespace kbench::serve {

namespace {

InputError bad_listen(const std::string& text, const std::string& why) {
  return InputError("--listen '" + text + "': expected HOST:PORT such as 127.0.0.1:8080 (PORT 0: any free port)" +
                    (why.empty() ? "" : "; " + why));
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text) {
  ListenAddress address;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw bad_listen(text, "an IPv6 address is written [ADDRESS]:PORT");
    }
    address.host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
    in6_addr ignored{};
    if (inet_pton(AF_INET6, address.host.c_str(), &ignored) != 1) {
      throw bad_listen(text, "'" + address.host + "' is not an IPv6 address");
    }
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) throw bad_listen(text, "");
    address.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (address.host.find(':') != std::string::npos) {
      throw bad_listen(text, "an IPv6 address is written [ADDRESS]:PORT");
    }
  }
  if (address.host.empty()) throw bad_listen(text, "the host is missing");
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    throw bad_listen(text, "the port is a number from 0 to 65535");
  }
  address.port = std::stoi(port_text);
  if (address.port > 65535) throw bad_listen(text, "the port is a number from 0 to 65535");
  return address;
}

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

std::string url_of(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/";
}

}  // namespace kbench::serve
