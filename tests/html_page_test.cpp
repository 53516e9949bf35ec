// The HTML page shell (src/report/html_page.h): escaping, a document that
// loads nothing from anywhere, the plotting libraries inlined whole and in
// order, hostile text that cannot end a <script> early, plot alternatives.
// What the page does in a browser is tests/browser/page_shell.test.mjs.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include "report/html_page.h"
#include "web/web_assets.h"

namespace kbench::report::html {
namespace {

std::string render(const Page& page) {
  std::ostringstream out;
  write_page(page, out);
  return out.str();
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

Page bar_chart_page() {
  Page page;
  page.title = "bars";
  page.body = "<h1>bars</h1><div id=\"bars\" class=\"plot\"></div>";
  page.plots.push_back({"bars",
                        {{"mark", "bar"},
                         {"data", {{"values", {{{"a", "x"}, {"b", 1}}, {{"a", "y"}, {"b", 2}}}}}},
                         {"encoding", {{"x", {{"field", "a"}, {"type", "nominal"}}},
                                       {"y", {{"field", "b"}, {"type", "quantitative"}}}}}},
                        "x is 1, y is 2"});
  return page;
}

TEST(HtmlPage, EscapesTheFiveCharactersThatMatterInContentAndAttributes) {
  EXPECT_EQ(escape(R"(<a href="x">Tom & Jerry's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  EXPECT_EQ(escape("syscall/getpid: mean (ns) ±3 µs"), "syscall/getpid: mean (ns) ±3 µs");
  EXPECT_EQ(escape(""), "");
}

TEST(HtmlPage, VersionsNameTheThreeLibrariesAtExactVersions) {
  EXPECT_TRUE(std::regex_match(library_versions(),
                               std::regex(R"(vega 6\.\d+\.\d+, vega-lite 6\.\d+\.\d+, vega-embed 7\.\d+\.\d+)")))
      << library_versions();
}

TEST(HtmlPage, EmbeddedLibrariesAreTheMinifiedBuildsOfTheirPinnedVersions) {
  auto libraries = web::libraries();
  ASSERT_EQ(libraries.size(), 3u);
  const char* globals[] = {").vega={}", ").vegaLite={}", ").vegaEmbed="};
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    const web::Library& library = libraries[i];
    SCOPED_TRACE(std::string(library.name));
    EXPECT_GT(library.script.size(), 50'000u);
    EXPECT_NE(library.script.find(std::string("\"") + std::string(library.version) + "\""), std::string::npos)
        << "the script does not carry its version string";
    EXPECT_NE(library.script.find(globals[i]), std::string::npos) << "not the UMD build that sets the global";
    // write_page relies on this to inline them unchanged: an update that adds
    // one of these would need another escape.
    EXPECT_EQ(library.script.find("<!--"), std::string_view::npos);
    EXPECT_EQ(library.script.find("<script"), std::string_view::npos);
    EXPECT_EQ(library.script.find("</script"), std::string_view::npos);
  }
}

TEST(HtmlPage, DocumentInlinesTheLibrariesInLoadOrder) {
  std::string document = render(bar_chart_page());
  std::size_t previous = 0;
  for (const web::Library& library : web::libraries()) {
    std::size_t at = document.find(library.script);
    ASSERT_NE(at, std::string::npos) << library.name << " is not inlined whole";
    EXPECT_GT(at, previous) << library.name << " comes before the library it needs";
    previous = at;
  }
  EXPECT_LT(previous, document.find("window.kbenchEmbed = function"));
}

TEST(HtmlPage, APageWithoutPlotsOrScriptIsSparedTheLibraries) {
  Page page;
  page.title = "index";
  page.body = "<p>tables only</p>";
  std::string document = render(page);
  for (const web::Library& library : web::libraries()) {
    EXPECT_EQ(document.find(library.script), std::string::npos) << library.name << " inlined into a page without plots";
  }
  EXPECT_LT(document.size(), 20000u);
  EXPECT_NE(document.find("kbenchReady"), std::string::npos) << "the page must still say when it is ready";
}

TEST(HtmlPage, DocumentLoadsNothingFromAnywhere) {
  Page page = bar_chart_page();
  page.script = "console.log('lazy');";
  std::string document = render(page);
  EXPECT_FALSE(std::regex_search(document, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(document, std::regex(R"(<script[^>]*\ssrc\s*=)", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(document, std::regex(R"(<link\b)", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(document, std::regex(R"(@import|url\(\s*["']?https?:)", std::regex::icase)));
  EXPECT_NE(document.find("default-src 'none'"), std::string::npos) << "no policy that forbids loading";
  EXPECT_NE(document.find("<noscript>"), std::string::npos) << "no word for a reader without JavaScript";
  EXPECT_EQ(document.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(document.substr(document.size() - 8), "</html>\n");
}

TEST(HtmlPage, HostileTextCannotEndAScriptOrTheTitleEarly) {
  const std::string hostile = "</script><script>alert(1)</script><!--";
  Page page = bar_chart_page();
  page.title = "</title>" + hostile;
  page.plots[0].alt = hostile;
  page.data = {{"benchmark", hostile}};
  std::string document = render(page);
  // Three libraries and the shell: four elements.
  EXPECT_EQ(count(document, "<script"), 4u);
  EXPECT_EQ(count(document, "</script"), 4u);
  EXPECT_EQ(count(document, "<title>"), 1u);
  EXPECT_EQ(count(document, "</title>"), 1u);
  EXPECT_EQ(count(document, "<!--"), 0u);
  // The data keeps its text for the page's scripts: \u003c is '<' in JSON.
  EXPECT_NE(document.find(R"(window.kbenchData = {"benchmark":"\u003c/script>\u003cscript>)"), std::string::npos);
}

TEST(HtmlPage, APageScriptThatWouldBreakItsElementIsRefused) {
  for (const char* breaking : {"var s = '</SCRIPT>';", "var s = '<!--<script>';", "x = '<script>'"}) {
    Page page = bar_chart_page();
    page.script = breaking;
    std::ostringstream out;
    EXPECT_THROW(write_page(page, out), std::invalid_argument) << breaking;
  }
  Page page = bar_chart_page();
  page.script = "if (a < b && c <= d) console.log('<b>' + '</b>');";
  EXPECT_NE(render(page).find(page.script), std::string::npos);
}

TEST(HtmlPage, AltBecomesThePlotsDescriptionUnlessTheSpecHasOne) {
  Page page = bar_chart_page();
  page.body += "<div id=\"described\"></div>";
  page.plots.push_back({"described", {{"mark", "point"}, {"description", "its own words"}}, "the alt"});
  std::string document = render(page);
  EXPECT_NE(document.find(R"("description":"x is 1, y is 2")"), std::string::npos);
  EXPECT_NE(document.find(R"("description":"its own words")"), std::string::npos);
  EXPECT_EQ(document.find("the alt"), std::string::npos);
}

TEST(HtmlPage, DataIsEmittedOnlyWhenThereIsSome) {
  Page page = bar_chart_page();
  EXPECT_EQ(render(page).find("window.kbenchData"), std::string::npos);
  page.data = nlohmann::json::array({1, 2});
  EXPECT_EQ(count(render(page), "window.kbenchData = [1,2];"), 1u);
}

TEST(HtmlPage, VerdictMarkShowsTheLetterAsWellAsTheColourClass) {
  EXPECT_EQ(verdict_mark('R'), R"(<span class="verdict verdict-R" title="regression">R</span>)");
  EXPECT_EQ(verdict_mark('I'), R"(<span class="verdict verdict-I" title="improvement">I</span>)");
  EXPECT_NE(verdict_mark('U').find(">U</span>"), std::string::npos);
  EXPECT_NE(verdict_mark('Q').find("undecided"), std::string::npos);
  EXPECT_THROW(verdict_mark('X'), std::invalid_argument);
  std::string document = render(bar_chart_page());
  for (const char* verdict_class : {".verdict-I", ".verdict-R", ".verdict-U", ".verdict-Q"}) {
    EXPECT_NE(document.find(verdict_class), std::string::npos) << verdict_class << " has no style";
  }
}

}  // namespace
}  // namespace kbench::report::html
