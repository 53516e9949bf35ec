#include "cli/commands.h"
#include "common/errors.h"
#include "store/result_store.h"

namespace kbench::cli {

void add_store_option(CLI::App& command, std::string& store_url) {
  // An empty --store (say, from an unset shell variable) is refused rather than
  // read as "the default": results would land in, or be read from, a store the
  // user did not name. An empty $KBENCH_STORE does mean the default, as an empty
  // environment variable usually means unset.
  command.add_option_function<std::string>(
      "--store",
      [&store_url](const std::string& url) {
        if (url.empty()) {
          throw InputError("--store '': expected a store URL such as sqlite:///path/results.db "
                           "(leave --store out for the default)");
        }
        store_url = url;
      },
      "resultstore URL (default: $KBENCH_STORE if set and not empty, else "
      "sqlite:///$XDG_DATA_HOME/kbench/results.db)");
}

void add_execution_options(CLI::App& command, std::string& cpus, bool& strict, std::string& store_url) {
  command.add_option("--cpus", cpus, "CPUs for the benchmarks, e.g. 1 or 0,1 (recorded with the results)");
  command.add_flag("--strict", strict, "refuse to start on a busy machine");
  add_store_option(command, store_url);
}

int& pending_exit_status() {
  static int status = 0;
  return status;
}

void keep_exit_status(int status) {
  if (status != kExitOk) pending_exit_status() = status;
}

}  // namespace kbench::cli
