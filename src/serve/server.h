#pragma once
// The HTTP side of `kbench serve`: cpp-httplib, GET only, one store.
#include <string>

#include "serve/listen_address.h"

namespace kbench::serve {

struct ServeOptions {
  std::string store_url;  // resolved (never empty)
  ListenAddress listen;
  // How long a connection may stay silent before the server closes it.
  int idle_timeout_seconds = 5;
};

// Binds, prints the URL as the first line of stdout, and answers requests
// until SIGINT or SIGTERM. Throws RunError when it cannot bind.
void serve(const ServeOptions& options);

}  // namespace kbench::serve
