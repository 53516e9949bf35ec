#include <iostream>

#include "cli/commands.h"
#include "common/errors.h"

int main(int argc, char** argv) {
  CLI::App app{
      "kbench: what a kernel change does to performance, with statistical confidence.\n\n"
      "  kbench run --swprofile base        # on kernel A\n"
      "  kbench run --swprofile patched     # on kernel B\n"
      "  kbench compare base patched        # the table for the mailing list\n",
      "kbench"};
  app.require_subcommand(1);
  app.footer("Run 'kbench COMMAND --help' for a command's options and examples.");
  kbench::cli::add_run_command(app);
  kbench::cli::add_compare_command(app);
  kbench::cli::add_show_command(app);
  kbench::cli::add_list_command(app);
  kbench::cli::add_noise_command(app);
  kbench::cli::add_export_command(app);
  kbench::cli::add_plan_command(app);
  kbench::cli::add_catalogue_command(app);
  kbench::cli::add_session_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kbench::kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kbench::kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11 throws help requests of subcommands as ParseError with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "kbench: " << e.what() << " (see kbench --help)\n";
    return kbench::kExitUsage;
  } catch (const kbench::InputError& e) {
    std::cerr << "kbench: " << e.what() << "\n";
    return kbench::kExitUsage;
  } catch (const kbench::RunError& e) {
    std::cerr << "kbench: " << e.what() << "\n";
    return kbench::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "kbench: " << e.what() << "\n";
    return kbench::kExitFailure;
  }
  return kbench::cli::pending_exit_status();
}
