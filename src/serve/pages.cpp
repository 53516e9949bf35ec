#include "serve/pages.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <sstream>

#include "app/compare.h"
#include "app/option_values.h"
#include "app/store_access.h"
#include "app/trend.h"
#include "common/errors.h"
#include "report/html_page.h"
#include "serve/page_shell.h"
#include "store/result_store.h"

namespace kbench::serve {

namespace {

using report::html::escape;

// The one value of a parameter that may appear at most once; "" when absent
// or empty (an HTML form sends an empty field as "name=").
std::string single(const Query& query, const std::string& name) {
  const auto [first, last] = query.equal_range(name);
  if (first == last) return "";
  if (std::next(first) != last) throw InputError("parameter '" + name + "': expected it once, got it several times");
  return first->second;
}

std::vector<std::string> every(const Query& query, const std::string& name) {
  std::vector<std::string> values;
  const auto [first, last] = query.equal_range(name);
  for (auto it = first; it != last; ++it) {
    if (!it->second.empty()) values.push_back(it->second);
  }
  return values;
}

// A misspelt parameter would otherwise be ignored and the page would show
// something other than what was asked for.
void require_known(const Query& query, const std::set<std::string>& known) {
  for (const auto& [name, value] : query) {
    if (known.count(name)) continue;
    throw InputError(fmt::format("unknown parameter '{}' (known: {})", name, fmt::join(known, ", ")));
  }
}

std::string join_names(const std::set<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + (name.empty() ? std::string("-") : name);
  return text;
}

std::string suts_table(store::ResultStore& store, const std::vector<store::SessionListing>& sessions) {
  std::map<std::string, std::set<std::string>> classes_of;
  for (const auto& session : sessions) classes_of[session.sut].insert(session.sut_class);
  std::string html =
      "<table id=\"suts\"><thead><tr><th>SUT</th><th>class</th><th>arch</th><th>CPUs</th><th>memory</th>"
      "<th>sessions</th><th>CPU model</th></tr></thead><tbody>\n";
  for (const auto& listing : store.list_suts("*")) {
    const auto& sut = listing.sut;
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"numbers\">{}</td><td class=\"numbers\">{} GiB</td>"
        "<td class=\"numbers\">{}</td><td>{}</td></tr>\n",
        escape(sut.name), escape(join_names(classes_of[sut.name])), escape(sut.arch), sut.cpu_count, sut.memory_gib,
        listing.sessions, escape(sut.cpu_model));
  }
  return html + "</tbody></table>\n";
}

std::string swprofiles_table(const std::vector<store::SwprofileListing>& swprofiles) {
  std::string html =
      "<table id=\"swprofiles\"><thead><tr><th>swprofile</th><th>sessions</th><th>samples</th>"
      "<th>kernel release</th><th>SUTs</th></tr></thead><tbody>\n";
  for (const auto& listing : swprofiles) {
    const std::string suts = fmt::format("{}", fmt::join(listing.suts, ", "));
    html += fmt::format(
        "<tr><td>{}</td><td class=\"numbers\">{}</td><td class=\"numbers\">{}</td><td>{}</td><td>{}</td></tr>\n",
        escape(listing.name), listing.sessions, listing.samples, escape(listing.kernel_release), escape(suts));
  }
  return html + "</tbody></table>\n";
}

std::string compare_form(const std::vector<store::SwprofileListing>& swprofiles,
                         const std::vector<store::BenchmarkListing>& benchmarks) {
  std::string base_options;
  std::string test_boxes;
  for (std::size_t i = 0; i < swprofiles.size(); ++i) {
    const std::string name = escape(swprofiles[i].name);
    base_options += fmt::format("<option value=\"{0}\"{1}>{0}</option>", name, i == 0 ? " selected" : "");
    test_boxes += fmt::format(
        "<label><input type=\"checkbox\" name=\"test\" value=\"{0}\"> {0}</label>\n", name);
  }
  std::string benchmark_names;
  for (const auto& benchmark : benchmarks) {
    benchmark_names += "<option value=\"" + escape(benchmark.name) + "\">";
  }
  return "<form id=\"compare-form\" action=\"/compare\" method=\"get\">\n"
         "<p><label>base <select name=\"base\">" +
         base_options +
         "</select></label></p>\n"
         "<fieldset><legend>tests</legend>\n" +
         test_boxes +
         "</fieldset>\n"
         "<p><label>benchmark (glob, optional) <input name=\"benchmark\" list=\"benchmark-names\" "
         "placeholder=\"*\"></label><datalist id=\"benchmark-names\">" +
         benchmark_names +
         "</datalist></p>\n"
         "<p><button type=\"submit\">compare</button></p>\n</form>\n";
}

// The store was there when serve started: failing to open it now (moved,
// deleted, the database server down) is the store's fault, not the
// request's (500, not 400).
app::OpenedStore open_served_store(const std::string& store_url) {
  try {
    return app::open_existing_store(store_url);
  } catch (const InputError& e) {
    throw RunError(e.what());
  }
}

// Its benchmark field offers the names of the compare form's datalist.
std::string trend_form() {
  return "<form id=\"trend-form\" action=\"/trend\" method=\"get\">\n"
         "<p><label>swprofiles (glob) <input name=\"swprofile\" value=\"*\" required></label>\n"
         "<label>benchmark (glob, optional) <input name=\"benchmark\" list=\"benchmark-names\" "
         "placeholder=\"*\"></label>\n"
         "<label>order <select name=\"order\"><option value=\"version\" selected>kernel version</option>"
         "<option value=\"store\">store</option></select></label></p>\n"
         "<p><button type=\"submit\">trend</button></p>\n</form>\n";
}

// Empty fields of a form mean "all" / "the default", as a left-out option does.
void read_glob(const Query& query, const std::string& name, std::string& into) {
  const std::string value = single(query, name);
  if (!value.empty()) into = app::parse_glob(name, value);
}
// The filters compare and trend share, named as their command-line options.
void read_sample_filter(const Query& query, store::SampleQuery& filter) {
  read_glob(query, "benchmark", filter.benchmark_glob);
  read_glob(query, "sut", filter.sut_glob);
  read_glob(query, "resultclass", filter.resultclass_glob);
}
void read_option(const Query& query, const std::string& name, std::string& into) {
  const std::string value = single(query, name);
  if (!value.empty()) into = value;
}

}  // namespace

Reply error_page(int status, const std::string& message) {
  static const std::map<int, std::string> reasons = {
      {400, "Bad request"}, {404, "Not found"}, {405, "Method not allowed"}, {500, "Store error"}};
  const auto reason = reasons.count(status) ? reasons.at(status) : "Error";
  return {status, dashboard_page(fmt::format("{} {}", status, reason),
                                 fmt::format("<h1>{} {}</h1>\n<p class=\"error\">{}</p>\n", status, escape(reason),
                                             escape(message)))};
}

Reply index_page(const std::string& store_url, const Query& query) {
  require_known(query, {});
  const app::OpenedStore opened = open_served_store(store_url);
  auto& store = *opened.store;
  const auto swprofiles = store.list_swprofiles("*");
  const auto sessions = store.list_sessions({});
  std::string body = "<h1>kbench dashboard</h1>\n<p>Store <code>" + escape(opened.url) + "</code>, read-only.</p>\n";
  if (swprofiles.empty()) {
    body += "<p id=\"empty\">The store holds no swprofiles yet: <code>kbench run --swprofile NAME --store " +
            escape(opened.url) + "</code> measures one.</p>\n";
  } else {
    const auto benchmarks = store.list_benchmarks("*");
    body += "<h2>Compare</h2>\n" + compare_form(swprofiles, benchmarks);
    body += "<h2>Trend</h2>\n" + trend_form();
  }
  body += "<h2>Swprofiles</h2>\n" + swprofiles_table(swprofiles);
  body += "<h2>SUTs</h2>\n" + suts_table(store, sessions);
  return {200, dashboard_page("kbench dashboard", body, Navigation::None)};
}

Reply compare_page(const std::string& store_url, const Query& query) {
  require_known(query, {"base", "test", "benchmark", "sut", "resultclass", "class", "method", "fdr", "min-change",
                        "sessions", "sign"});
  app::CompareArguments request;
  request.store_url = store_url;
  request.format = "html";
  const std::string base = single(query, "base");
  if (base.empty()) throw InputError("parameter 'base': expected the swprofile to compare against, e.g. ?base=A&test=B");
  const std::vector<std::string> tests = every(query, "test");
  if (tests.empty()) throw InputError("parameter 'test': expected at least one swprofile to compare with base '" + base + "'");
  app::require_distinct_swprofiles(base, tests);
  request.profiles.push_back(base);
  request.profiles.insert(request.profiles.end(), tests.begin(), tests.end());
  read_sample_filter(query, request.filter);
  read_glob(query, "class", request.filter.class_glob);
  read_option(query, "method", request.method);
  read_option(query, "fdr", request.fdr);
  read_option(query, "min-change", request.min_change);
  read_option(query, "sessions", request.sessions);
  read_option(query, "sign", request.sign);
  open_served_store(store_url);  // so a store gone missing is a 500, as on the index
  std::ostringstream report;
  std::ostringstream notes;  // failed benchmarks, incomplete sessions: the html page carries them too
  app::write_comparison(app::parse_compare_request(request), report, notes);
  return {200, served_report(report.str())};
}

Reply trend_page(const std::string& store_url, const Query& query) {
  require_known(query, {"swprofile", "benchmark", "sut", "resultclass", "order", "sign", "min-change", "min-segment"});
  app::TrendArguments request;
  request.store_url = store_url;
  request.format = "html";
  request.swprofile_glob = single(query, "swprofile");
  if (request.swprofile_glob.empty()) {
    throw InputError("parameter 'swprofile': expected a glob of the swprofiles to follow, e.g. ?swprofile=v6.*");
  }
  read_sample_filter(query, request.filter);
  read_option(query, "order", request.order);
  read_option(query, "sign", request.sign);
  read_option(query, "min-change", request.min_change);
  read_option(query, "min-segment", request.min_segment);
  open_served_store(store_url);  // a store gone missing is a 500
  std::ostringstream report;
  app::write_trend(app::parse_trend_request(request), report);
  return {200, served_report(report.str())};
}

}  // namespace kbench::serve
