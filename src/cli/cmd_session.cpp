// kbench session show|delete: one stored session, named as users see it:
// its swprofile and its number (1, 2, ...) within SUT and swprofile.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <limits>
#include <set>
#include <string_view>

#include "app/session_report.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/errors.h"
#include "common/spoken_list.h"
#include "common/params.h"
#include "store/result_store.h"
#include "sysinfo/fingerprint_view.h"

namespace kbench::cli {

namespace {

struct SessionOptions {
  std::string swprofile;
  int number = 0;
  std::string sut;
  bool yes = false;
  std::string store_url;
};

std::string session_name(const store::SessionListing& session) {
  return fmt::format("session {} of swprofile {} on {}", session.number(), session.swprofile, session.sut);
}

store::SessionListing find_session(store::ResultStore& store, const std::string& url, const SessionOptions& options) {
  if (!store.has_swprofile(options.swprofile)) {
    const auto listings = store.list_swprofiles("*");
    const std::string names = comma_list(listings, &store::SwprofileListing::name);
    throw InputError("swprofile '" + options.swprofile + "' is not in " + url +
                     " (known: " + (names.empty() ? std::string("none") : names) + ")");
  }
  std::vector<store::SessionListing> matches;
  std::set<std::string> suts;
  int highest = 0;
  for (auto& session : store.list_sessions({options.swprofile})) {
    if (!options.sut.empty() && session.sut != options.sut) continue;
    suts.insert(session.sut);
    highest = std::max(highest, session.number());
    if (session.number() == options.number) matches.push_back(std::move(session));
  }
  if (matches.empty()) {
    if (!options.sut.empty() && suts.empty()) {
      throw InputError("--sut " + options.sut + ": swprofile " + options.swprofile + " has no sessions on that SUT");
    }
    throw InputError(fmt::format("session {}: swprofile {} has sessions 1 to {}{} (see kbench list sessions)",
                                 options.number, options.swprofile, highest,
                                 options.sut.empty() ? "" : " on " + options.sut));
  }
  if (matches.size() > 1) {
    throw InputError(fmt::format("session {} of swprofile {} exists on several SUTs ({}): choose one with --sut",
                                 options.number, options.swprofile,
                                 comma_list(matches, &store::SessionListing::sut)));
  }
  return matches.front();
}

std::string fingerprint_field(const sysinfo::FingerprintView& fingerprint, const char* key) {
  const nlohmann::json* value = fingerprint.member(key);
  if (!value || value->is_null()) return "";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

void show_command(const SessionOptions& options) {
  const OpenedStore opened = open_existing_store(options.store_url);
  const auto session = find_session(*opened.store, opened.url, options);
  const auto listing = opened.store->session(session.id).value_or(session);
  std::cout << session_name(listing) << "\n";
  std::cout << fmt::format("  {:<12} {}\n", "state:",
                           listing.complete() ? std::string("complete")
                                              : "incomplete: " + app::describe_incompleteness(listing));
  std::cout << fmt::format("  {:<12} {}\n", "started:", listing.started_at);
  std::cout << fmt::format("  {:<12} {}\n", "samples:", listing.samples);
  namespace key = sysinfo::fingerprint_key;
  const sysinfo::FingerprintView fp(listing.fingerprint);
  const std::vector<std::pair<const char*, const char*>> fields = {
      {"kernel:", key::kKernelRelease}, {"hostname:", key::kHostname}, {"arch:", key::kArch},
      {"cpu model:", key::kCpuModel},   {"cpus:", key::kCpuCount},     {"memory GiB:", key::kMemoryGib},
      {"cmdline:", key::kCmdline},      {"governor:", key::kGovernor}, {"clocksource:", key::kClocksource}};
  for (const auto& [label, name] : fields) {
    std::string value = fingerprint_field(fp, name);
    // The agent records a missing cpufreq directory (most VMs) as null: say
    // so, rather than leave out the line a reader looks for.
    if (value.empty() && std::string_view(name) == key::kGovernor && fp.member(name) && fp.member(name)->is_null()) {
      value = "none (the SUT has no cpufreq)";
    }
    if (!value.empty()) std::cout << fmt::format("  {:<12} {}\n", label, value);
  }
  if (const auto plan = fp.plan()) std::cout << fmt::format("  {:<12} {}\n", "plan:", plan->path.value_or(""));
  std::cout << fmt::format("\n{:<32} {:<10} {:>7} {:>9}  {}\n", "benchmark", "outcome", "repeats", "samples",
                           "params / reason");
  for (const auto& benchmark : opened.store->session_benchmarks(session.id)) {
    std::string outcome = "none";
    std::string detail = params_text(benchmark.params, " ");
    if (benchmark.outcome) {
      outcome = std::string(store::to_string(benchmark.outcome->status));
      if (!benchmark.outcome->reason.empty()) detail += (detail.empty() ? "" : "; ") + benchmark.outcome->reason;
    } else if (benchmark.repeats > 0) {
      outcome = "interrupted";
    }
    std::cout << fmt::format("{:<32} {:<10} {:>7} {:>9}  {}\n", benchmark.benchmark, outcome, benchmark.repeats,
                             benchmark.samples, detail);
  }
}

void delete_command(const SessionOptions& options) {
  const std::string url = resolve_store_url(options.store_url);
  auto store = store::open_store(url, store::OpenMode::MustExist);
  const auto session = find_session(*store, url, options);
  const std::string what = fmt::format("{} (started {}, {} sample{})", session_name(session), session.started_at,
                                       session.samples, session.samples == 1 ? "" : "s");
  if (!options.yes) {
    if (isatty(STDIN_FILENO) != 1) {
      throw InputError("session delete: standard input is not a terminal; pass --yes to delete " + what);
    }
    std::cerr << "delete " << what << " from " << url << "? [y/N] " << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      std::cerr << "kbench: nothing deleted\n";
      return;
    }
  }
  store->delete_session(session.id);
  std::cout << "deleted " << what << "\n";
}

void add_selector(CLI::App& cmd, SessionOptions& options) {
  cmd.add_option("swprofile", options.swprofile, "swprofile of the session")->required();
  // CLI::PositiveNumber's message for 0 printed the largest double in full.
  cmd.add_option_function<std::string>(
         "number",
         [&options](const std::string& text) {
           options.number = parse_integer("session number", text, 1, std::numeric_limits<int>::max());
         },
         "the session's number within SUT and swprofile (kbench list sessions)")
      ->required();
  cmd.add_option("--sut", options.sut, "the SUT, when the swprofile ran on several");
  add_store_option(cmd, options.store_url);
}

}  // namespace

void add_session_command(CLI::App& app) {
  auto options = std::make_shared<SessionOptions>();
  CLI::App* cmd = app.add_subcommand("session", "Show or delete one stored session");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n"
      "  kbench list sessions                  # the numbers\n"
      "  kbench session show base 2\n"
      "  kbench session delete base 2 --yes");

  CLI::App* show = cmd->add_subcommand("show", "Fingerprint, state and benchmarks of one session");
  add_selector(*show, *options);
  show->callback([options] { show_command(*options); });

  CLI::App* remove = cmd->add_subcommand("delete", "Delete one session with its samples and outcomes");
  add_selector(*remove, *options);
  remove->add_flag("--yes", options->yes, "do not ask (required when standard input is not a terminal)");
  remove->footer(
      "Examples:\n"
      "  kbench session delete base 2                # asks first\n"
      "  kbench session delete base 2 --yes --sut vm # in a script; --sut when base ran on several\n"
      "Asks for confirmation on a terminal. The session's samples and outcomes go in one\n"
      "transaction: all or nothing. The numbers of the other sessions do not change.");
  remove->callback([options] { delete_command(*options); });
}

}  // namespace kbench::cli
