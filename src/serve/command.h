#pragma once
// `kbench serve`, added to the app by main() beside cli's commands: serve
// renders through cli's compare and trend, so the command lives here and
// cli's library does not depend on serve.
#include <CLI/CLI.hpp>

namespace kbench::serve {

void add_serve_command(CLI::App& app);

}  // namespace kbench::serve
