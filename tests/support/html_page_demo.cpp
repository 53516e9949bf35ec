// html-page-demo [--broken] OUT.html: a page made by the page shell alone
// (html_page.h) for tests/browser/page_shell.test.mjs: one eager Vega-Lite
// bar chart with a bar per benchmark, and a lazy point plot in a <details>
// that is embedded on first opening, as the report's per-row sample plots
// are. --broken: a page whose plot has no element and which asks for an
// image from the network, both of which the shell must make visible errors.
#include <fstream>
#include <iostream>
#include <string>

#include "report/html_page.h"

namespace html = kbench::report::html;

namespace {

nlohmann::json bar_chart() {
  nlohmann::json values = nlohmann::json::array();
  const std::pair<const char*, double> changes[] = {
      {"syscall/getpid", 3.5}, {"mem/bandwidth", -1.25}, {"sched/pipe", 0.4}, {"sock/tcp_rr", -7.0}, {"perf/execve", 12.0}};
  for (const auto& [benchmark, change] : changes) values.push_back({{"benchmark", benchmark}, {"change", change}});
  return {{"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
          {"data", {{"values", values}}},
          {"mark", "bar"},
          {"encoding",
           {{"y", {{"field", "benchmark"}, {"type", "nominal"}, {"sort", nullptr}}},
            {"x", {{"field", "change"}, {"type", "quantitative"}, {"title", "change (%)"}}}}}};
}

nlohmann::json sample_plot() {
  nlohmann::json values = nlohmann::json::array();
  for (int boot = 1; boot <= 3; ++boot) {
    for (int repeat = 0; repeat < 4; ++repeat) {
      values.push_back({{"boot", boot}, {"ns", 100.0 + boot * 2 + repeat * 0.5 + (boot == 3 ? 30 : 0)}});
    }
  }
  return {{"data", {{"values", values}}},
          {"mark", "point"},
          {"description", "12 samples in 3 boots; boot 3 is about 30 ns slower"},
          {"encoding",
           {{"x", {{"field", "boot"}, {"type", "ordinal"}}}, {"y", {{"field", "ns"}, {"type", "quantitative"}}}}}};
}

}  // namespace

html::Page broken_page() {
  html::Page page;
  page.title = "broken";
  page.body = R"(<p>No element for the plot; an image from the network: <img src="https://example.com/x.png" alt="x"></p>)";
  page.plots.push_back({"missing", bar_chart(), "a plot with no element"});
  return page;
}

int main(int argc, char** argv) {
  bool broken = argc == 3 && std::string(argv[1]) == "--broken";
  if (argc != 2 && !broken) {
    std::cerr << "usage: html-page-demo [--broken] OUT.html\n";
    return 2;
  }
  const char* path = argv[argc - 1];
  html::Page page;
  page.title = "kbench page shell <demo> & test";
  page.body = R"(<h1>Page shell demo</h1>
<p>Verdicts: )" + html::verdict_mark('I') + " " + html::verdict_mark('R') + " " + html::verdict_mark('U') + " " +
              html::verdict_mark('Q') + R"(</p>
<table><thead><tr><th>benchmark</th><th class="numbers">change</th></tr></thead>
<tbody><tr><td>syscall/getpid</td><td class="numbers">+3.50%</td></tr></tbody></table>
<div id="changes" class="plot"></div>
<details id="samples-details"><summary>samples of syscall/getpid</summary><div id="samples" class="plot"></div></details>)";
  page.plots.push_back({"changes", bar_chart(), "change per benchmark; the numbers are in the table"});
  page.data = {{"samples", sample_plot()}};
  page.script = R"js(
document.getElementById("samples-details").addEventListener("toggle", function (event) {
  if (event.target.open && !event.target.dataset.embedded) {
    event.target.dataset.embedded = "1";
    window.kbenchEmbed("samples", window.kbenchData.samples);
  }
});
)js";
  if (broken) page = broken_page();
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    std::cerr << "html-page-demo: cannot write " << path << "\n";
    return 2;
  }
  html::write_page(page, out);
  out.close();
  if (!out) {
    std::cerr << "html-page-demo: cannot write " << path << "\n";
    return 1;
  }
  return 0;
}
