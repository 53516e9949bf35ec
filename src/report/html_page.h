#pragma once
// The page shell every HTML output shares (compare --format html, trend, the
// serve dashboard): one self-contained document with the plotting libraries
// inlined, a common style sheet and a small script that embeds the plots.
// docs/reports.md, "HTML pages".
//
// Contract for page scripts and the browser tests (tests/browser/):
// - every embedded view is in window.kbenchViews[id]; window.kbenchEmbed(id,
//   spec) embeds one more (a lazy plot: in a <details>, on first open) and
//   returns vega-embed's promise;
// - embedding errors go to console.error;
// - when every eager plot (Page::plots) is embedded, document.body.dataset
//   .kbenchReady is "1" ("failed" when one could not be).
// - style: readable tables (class "numbers" right-aligns a column's cells);
//   .verdict-I .verdict-R .verdict-U .verdict-Q colour a verdict
//   (improvement, regression, unchanged, undecided). Colour is never the only
//   sign: write the letter too (verdict_mark does).
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::report::html {

// Text made safe for element content and (quoted) attribute values.
std::string escape(std::string_view text);

struct Plot {
  std::string id;       // of the <div> in Page::body the plot goes into
  nlohmann::json spec;  // Vega-Lite; data inline (a page fetches nothing)
  std::string alt;      // text alternative (the spec's description unless it has one)
};

struct Page {
  std::string title;
  std::string body;          // HTML fragment inside <main>; must contain <div id="{plot.id}"> per plot
  std::vector<Plot> plots;   // embedded on load, renderer "svg", actions off; with no plots and
                             // no script the libraries are left out (a page without drawings)
  nlohmann::json data;       // emitted once as window.kbenchData (for page scripts; null: none)
  std::string script;        // extra inline JS run after the libraries (lazy plots etc.); never
                             // "<script", "</script" or "<!--" (write_page throws invalid_argument)
};

// One self-contained document: it loads nothing, and its Content-Security-
// Policy forbids loading anything, so a page that would need the network
// fails visibly (console error) instead of quietly on a mail reader's machine.
void write_page(const Page& page, std::ostream& out);

// "vega 6.x.y, vega-lite 6.x.y, vega-embed 7.x.y": what write_page inlines.
std::string library_versions();

// <span class="verdict verdict-R" title="regression">R</span> for a verdict
// letter I, R, U or Q: colour and letter, readable without colour.
std::string verdict_mark(char verdict);

}  // namespace kbench::report::html
