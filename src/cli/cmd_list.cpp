// kbench list: what the store holds.
#include <fmt/format.h>

#include <fnmatch.h>

#include <algorithm>
#include <sstream>
#include <iostream>
#include <tuple>

#include "app/session_report.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "store/result_store.h"

namespace kbench::cli {

namespace {

struct ListOptions {
  std::string what;
  std::string glob = "*";
  std::string swprofile_glob = "*";
  std::string store_url;
};

// One line per session, oldest first within each swprofile and SUT.
void list_sessions(store::ResultStore& store, const std::string& swprofile_glob) {
  std::vector<std::string> names;
  for (const auto& listing : store.list_swprofiles(swprofile_glob)) names.push_back(listing.name);
  std::cout << fmt::format("{:<24} {:<20} {:>7}  {:<20}  {:<24} {:>9}  {}\n", "swprofile", "SUT", "session",
                           "started", "kernel", "samples", "state");
  if (names.empty()) return;
  auto sessions = store.list_sessions(names);
  std::stable_sort(sessions.begin(), sessions.end(), [](const auto& a, const auto& b) {
    return std::tie(a.swprofile, a.sut, a.session_index) < std::tie(b.swprofile, b.sut, b.session_index);
  });
  for (const auto& s : sessions) {
    const std::string state = s.complete() ? "complete" : "incomplete: " + app::describe_incompleteness(s);
    std::cout << fmt::format("{:<24} {:<20} {:>7}  {:<20}  {:<24} {:>9}  {}\n", s.swprofile, s.sut, s.number(),
                             s.started_at, s.kernel_release, s.samples, state);
  }
}

// One line per boot of an ssh SUT (sut.boot) or session of a SUT that boots
// a kernel for it (qemu, lava), oldest first; a failed one with its reason
// and the console's last lines. "ready": until ssh answered, or the agent's
// fingerprint came back from the booted kernel.
void list_boots(store::ResultStore& store, const std::string& swprofile_glob) {
  std::cout << fmt::format("{:<20} {:>4}  {:<20}  {:<20} {:<7} {:>8}  {:<26} {}\n", "SUT", "boot", "started",
                           "swprofile", "method", "ready", "release", "result");
  for (const auto& boot : store.list_boots("", "")) {
    if (fnmatch(swprofile_glob.c_str(), boot.swprofile.c_str(), 0) != 0) continue;
    std::string result = boot.ok ? (boot.session ? fmt::format("ok, session id {}", *boot.session) : "ok")
                                 : "FAILED: " + boot.reason;
    std::cout << fmt::format("{:<20} {:>4}  {:<20}  {:<20} {:<7} {:>7.1f}s  {:<26} {}\n", boot.sut, boot.number,
                             boot.started_at, boot.swprofile, boot.method, boot.seconds, boot.release, result);
    if (!boot.ok && !boot.console_tail.empty()) {
      std::istringstream lines(boot.console_tail);
      for (std::string line; std::getline(lines, line);) std::cout << "    console: " << line << "\n";
    }
  }
}

void list_command(const ListOptions& options) {
  const OpenedStore opened = open_existing_store(options.store_url);
  auto& store = opened.store;
  if (options.what == "sessions") {
    list_sessions(*store, options.swprofile_glob);
  } else if (options.what == "boots") {
    list_boots(*store, options.swprofile_glob);
  } else if (options.what == "sut") {
    std::cout << fmt::format("{:<24} {:<8} {:>5} {:>7} {:>8}  {}\n", "SUT", "arch", "cpus", "memory", "sessions",
                             "cpu model");
    for (const auto& l : store->list_suts(options.glob)) {
      std::cout << fmt::format("{:<24} {:<8} {:>5} {:>4}GiB {:>8}  {}\n", l.sut.name, l.sut.arch, l.sut.cpu_count,
                               l.sut.memory_gib, l.sessions, l.sut.cpu_model);
    }
  } else if (options.what == "swprofile") {
    std::cout << fmt::format("{:<32} {:>8} {:>9}  {:<28} {}\n", "swprofile", "sessions", "samples", "kernel",
                             "SUTs");
    for (const auto& l : store->list_swprofiles(options.glob)) {
      std::cout << fmt::format("{:<32} {:>8} {:>9}  {:<28} {}\n", l.name, l.sessions, l.samples,
                               l.kernel_release, fmt::join(l.suts, ","));
    }
  } else {
    std::cout << fmt::format("{:<28} {:>9}  {}\n", "benchmark", "samples", "result classes");
    for (const auto& l : store->list_benchmarks(options.glob)) {
      std::vector<std::string> labels;
      for (const auto& rc : l.result_classes) labels.push_back(rc.label());
      std::cout << fmt::format("{:<28} {:>9}  {}\n", l.name, l.samples, fmt::join(labels, "; "));
    }
  }
}

}  // namespace

void add_list_command(CLI::App& app) {
  auto options = std::make_shared<ListOptions>();
  CLI::App* cmd =
      app.add_subcommand("list", "List the SUTs, swprofiles, benchmarks, sessions or boots in the store");
  add_choice_option(*cmd, "kind", options->what, {"sut", "swprofile", "benchmark", "sessions", "boots"},
                    "sut, swprofile, benchmark, sessions or boots",
                    {{"suts", "sut"}, {"swprofiles", "swprofile"}, {"benchmarks", "benchmark"}, {"session", "sessions"},
                     {"boot", "boots"}});
  cmd->get_option("kind")->required();
  add_glob_option(*cmd, "--id", options->glob, "only names matching this glob");
  add_glob_option(*cmd, "--swprofile", options->swprofile_glob,
                  "sessions, boots: only swprofiles matching this glob");
  add_store_option(*cmd, options->store_url);
  cmd->footer(
      "Examples:\n  kbench list swprofile\n  kbench list benchmark --id 'syscall/*'\n"
      "  kbench list sessions --swprofile 'base*'\n"
      "  kbench list boots      # each boot (ssh SUT with sut.boot, qemu, lava): time until ready, or why not\n"
      "A session is numbered 1, 2, ... within its SUT and swprofile; `kbench session show|delete\n"
      "SWPROFILE NUMBER` takes that number.");
  cmd->callback([options] { list_command(*options); });
}

}  // namespace kbench::cli
