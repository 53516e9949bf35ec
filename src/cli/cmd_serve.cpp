// kbench serve: a local read-only dashboard over a store.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "serve/listen_address.h"
#include "serve/server.h"

namespace kbench::cli {

namespace {

struct ServeCommandOptions {
  std::string store_url;
  std::string listen = serve::kDefaultListen;
  int idle_timeout_seconds = 5;
};

void serve_command(const ServeCommandOptions& options) {
  serve::ServeOptions serve_options;
  serve_options.listen = serve::parse_listen_address(options.listen);
  serve_options.idle_timeout_seconds = options.idle_timeout_seconds;
  // Opened once now so a missing or foreign store is refused before the
  // server starts (exit 2); each page opens it again, read-only, to see
  // what runs have added since.
  serve_options.store_url = open_existing_store(options.store_url).url;
  serve::serve(serve_options);
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeCommandOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "A local read-only web dashboard over the store");
  add_store_option(*cmd, options->store_url);
  cmd->add_option("--listen", options->listen,
                  std::string("HOST:PORT to listen on (default ") + serve::kDefaultListen +
                      "; PORT 0: any free port; a non-loopback HOST makes the store readable by the network)");
  cmd->add_option("--idle-timeout", options->idle_timeout_seconds,
                  "seconds a connection may stay silent before it is closed (default 5)")
      ->check(CLI::Range(1, 3600));
  cmd->footer(
      "Prints the URL it listens on as its first line, serves until Ctrl-C (SIGINT) or SIGTERM.\n"
      "Examples:\n"
      "  kbench serve                                  # http://127.0.0.1:8080/ over the default store\n"
      "  kbench serve --store lab.db --listen 127.0.0.1:0\n"
      "  ssh -t -L 8080:127.0.0.1:8080 lab kbench serve   # then open http://127.0.0.1:8080/ here");
  cmd->callback([options] { serve_command(*options); });
}

}  // namespace kbench::cli
