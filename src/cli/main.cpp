#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/errors.h"

namespace {

// A closed 0, 1 or 2 would be handed to the next file kbench opens (an agent
// pipe, a plan), and output meant for the terminal would land there. As
// gnulib's stdopen does, hold each with /dev/null opened the way that makes
// its use fail (writes to stdout fail with EBADF, as on the closed descriptor).
void hold_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (held != fd && held >= 0) close(held);  // a lower descriptor was closed too: taken in its turn
  }
}

// std::cout's buffer: writes go to descriptor 1 and the first error is kept.
// stdio drops a buffer it failed to write and, by the time kbench exits, has
// forgotten why (ENOSPC, EPIPE); this reports it. After an error nothing more
// is written, so a long export to a full disk stops costing time.
class StdoutBuffer : public std::streambuf {
 public:
  StdoutBuffer() { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }

  int sync() override {
    const char* data = pbase();
    std::size_t left = static_cast<std::size_t>(pptr() - pbase());
    while (left > 0 && error_ == 0) {
      const ssize_t written = write(STDOUT_FILENO, data, left);
      if (written < 0) {
        if (errno != EINTR) error_ = errno;
        continue;
      }
      data += written;
      left -= static_cast<std::size_t>(written);
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return error_ == 0 ? 0 : -1;
  }

 private:
  char buffer_[1 << 16];
  int error_ = 0;
};

// The one place where kbench learns whether its output arrived: a full disk or
// a closed stdout is a failure (exit 1, one line), never exit 0; a reader that
// went away (`kbench export | head -1`) ends kbench quietly by SIGPIPE, as it
// ends coreutils, also when whoever started kbench ignored SIGPIPE.
int finish_output(StdoutBuffer& buffer, int status) {
  std::cout.flush();
  int error = buffer.error();
  // Closing reports what a deferred write-back (NFS) failed to store.
  if (error == 0 && close(STDOUT_FILENO) != 0 && errno != EBADF) error = errno;
  if (error == 0) return status;
  if (error == EPIPE) {
    std::signal(SIGPIPE, SIG_DFL);
    std::raise(SIGPIPE);
    return 128 + SIGPIPE;
  }
  std::cerr << "kbench: cannot write to standard output: " << std::strerror(error) << "\n";
  // A tripped gate (compare --fail-on) promises the table was printed: it was not.
  return status == kbench::kExitOk || status == kbench::kExitGate ? kbench::kExitFailure : status;
}

// Optimal string alignment distance: a swap of two neighbours counts once,
// so "compaer" is as near "compare" as a one-letter typo.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// CLI11 says "A subcommand is required" for a misspelt or missing command,
// naming neither the word it did not know nor the commands there are. The
// command words come first (a group has no options but --help), so
// they are checked here, before CLI11 parses.
void check_command_words(const CLI::App& app, int argc, char** argv) {
  const CLI::App* current = &app;
  std::string path;
  for (int i = 1;; ++i) {
    const auto commands = current->get_subcommands(std::function<bool(const CLI::App*)>([](const CLI::App*) {
      return true;
    }));
    if (commands.empty() || current->get_require_subcommand_min() == 0) return;
    const std::string word = i < argc ? argv[i] : "";
    if (word.starts_with("-") && current->get_option_no_throw(word.substr(0, word.find('='))) != nullptr) return;
    std::string names;
    std::string nearest;
    std::size_t nearest_distance = 3;  // at most two typos are a suggestion
    const CLI::App* next = nullptr;
    for (const CLI::App* command : commands) {
      if (command->get_name() == word) next = command;
      names += (names.empty() ? "" : ", ") + command->get_name();
      const std::size_t distance = edit_distance(word, command->get_name());
      if (distance < nearest_distance && distance < command->get_name().size()) {
        nearest = command->get_name();
        nearest_distance = distance;
      }
    }
    if (next == nullptr) {
      if (i >= argc) throw kbench::InputError(path + "command missing: expected one of " + names);
      if (word.starts_with("-")) {
        throw kbench::InputError(path + "command missing before '" + word + "': expected one of " + names);
      }
      throw kbench::InputError(path + "command '" + word + "': expected one of " + names +
                               (nearest.empty() ? "" : " (did you mean " + nearest + "?)"));
    }
    current = next;
    path += current->get_name() + " ";
  }
}

// CLI11 words an option given twice "--swprofile: At Most 1 required but
// received 2", which reads as if a value were missing; said here in kbench's
// words. Other parse errors keep CLI11's, with the pointer to --help.
std::string parse_error_message(const CLI::ParseError& e) {
  static const std::regex at_most("(.+): At Most ([0-9]+) required but received ([0-9]+)");
  const std::string what = e.what();
  std::smatch parts;
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && std::regex_match(what, parts, at_most)) {
    if (parts[2] == "1") return parts[1].str() + " given " + parts[3].str() + " times: expected it once";
    return parts[1].str() + " given " + parts[3].str() + " values: expected at most " + parts[2].str();
  }
  return what + " (see kbench --help)";
}

int run(int argc, char** argv) {
  CLI::App app{
      "kbench: what a kernel change does to performance, with statistical confidence.\n\n"
      "  kbench run --swprofile base        # on kernel A\n"
      "  kbench run --swprofile patched     # on kernel B\n"
      "  kbench compare base patched        # the table for the mailing list\n",
      "kbench"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kbench ") + KBENCH_VERSION);
  app.footer("Run 'kbench COMMAND --help' for a command's options and examples.");
  kbench::cli::add_run_command(app);
  kbench::cli::add_calibrate_command(app);
  kbench::cli::add_compare_command(app, std::vector<std::string>(argv + 1, argv + argc));
  kbench::cli::add_show_command(app);
  kbench::cli::add_list_command(app);
  kbench::cli::add_noise_command(app);
  kbench::cli::add_export_command(app);
  kbench::cli::add_plan_command(app);
  kbench::cli::add_catalogue_command(app);
  kbench::cli::add_session_command(app);
  kbench::cli::add_merge_command(app);
  kbench::cli::add_serve_command(app);
  kbench::cli::add_trend_command(app);
  kbench::cli::add_log_command(app);
  kbench::cli::add_profile_command(app);
  kbench::cli::add_build_command(app);
  kbench::cli::add_bisect_command(app);

  try {
    check_command_words(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return kbench::kExitOk;
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kbench::kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return kbench::kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11 throws help requests of subcommands as ParseError with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "kbench: " << parse_error_message(e) << "\n";
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

}  // namespace

int main(int argc, char** argv) {
  hold_closed_standard_descriptors();
  static StdoutBuffer stdout_buffer;
  std::streambuf* const original = std::cout.rdbuf(&stdout_buffer);
  const int status = finish_output(stdout_buffer, run(argc, argv));
  // std::cout is flushed once more at exit, by the ios_base::Init objects of
  // the shared libraries (libyaml-cpp's runs after stdout_buffer, a static
  // made later, is destroyed): it must not point at the destroyed buffer
  // then. Under ASan that flush crashed every kbench at exit.
  std::cout.rdbuf(original);
  return status;
}
