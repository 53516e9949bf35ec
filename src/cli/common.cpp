#include "cli/commands.h"
#include "store/result_store.h"

namespace kbench::cli {

void add_store_option(CLI::App& command, std::string& store_url) {
  command.add_option("--store", store_url,
                     "resultstore URL (default: $KBENCH_STORE, else "
                     "sqlite:///$XDG_DATA_HOME/kbench/results.db)");
}

void add_execution_options(CLI::App& command, std::string& cpus, bool& strict, std::string& store_url) {
  command.add_option("--cpus", cpus, "CPUs for the benchmarks, e.g. 1 or 0,1 (recorded with the results)");
  command.add_flag("--strict", strict, "refuse to start on a busy machine");
  add_store_option(command, store_url);
}

std::string resolve_store_url(const std::string& option_value) {
  return option_value.empty() ? store::default_store_url() : option_value;
}

int& pending_exit_status() {
  static int status = 0;
  return status;
}

}  // namespace kbench::cli
