#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

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

int run(int argc, char** argv) {
  CLI::App app{
      "kbench: what a kernel change does to performance, with statistical confidence.\n\n"
      "  kbench run --swprofile base        # on kernel A\n"
      "  kbench run --swprofile patched     # on kernel B\n"
      "  kbench compare base patched        # the table for the mailing list\n",
      "kbench"};
  app.require_subcommand(1);
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
  kbench::cli::add_build_command(app);
  kbench::cli::add_bisect_command(app);

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
