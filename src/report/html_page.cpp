#include "report/html_page.h"

#include <cctype>
#include <ostream>
#include <stdexcept>

#include "assets/html/page.css.h"
#include "assets/html/page.js.h"
#include "web/web_assets.h"

namespace kbench::report::html {
namespace {

// Colours pass WCAG AA on their backgrounds; every verdict also shows its
// letter, so the page reads the same printed in black and white.
constexpr std::string_view style_sheet = assets::html::page_css;

// Runs after the libraries; window.kbenchPlots holds the eager plots.
constexpr std::string_view shell_script = assets::html::page_js;

// Script text goes into <script> unchanged, so it must not hold what would
// end the element early ("</script") or make the parser skip its real end
// tag ("<!--" then "<script"). No escape is right in every place JS can hold
// text (in a regex "<\\script" is whitespace), so such text is refused: text
// from the data belongs in Page::data, which json_for_script makes safe.
void write_script_text(std::string_view what, std::string_view text, std::ostream& out) {
  for (std::size_t at = text.find('<'); at != std::string_view::npos; at = text.find('<', at + 1)) {
    std::string lowered;
    for (char c : text.substr(at, 8)) lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lowered.starts_with("<!--") || lowered.starts_with("<script") || lowered.starts_with("</script")) {
      throw std::invalid_argument("html page: " + std::string(what) + " holds \"" + lowered.substr(0, 8) +
                                  "\", which would break its <script> element (put such text into the data)");
    }
  }
  out << text;
}

// JSON as a JS expression inside <script>: '<' only occurs inside strings,
// where \u003c is the same character, so no "</script" or "<!--" survives.
std::string json_for_script(const nlohmann::json& value) {
  std::string dumped = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(dumped.size());
  for (char c : dumped) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }
  return safe;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&#39;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string library_versions() {
  std::string versions;
  for (const web::Library& library : web::libraries()) {
    if (!versions.empty()) versions += ", ";
    versions += std::string(library.name) + " " + std::string(library.version);
  }
  return versions;
}

std::string verdict_mark(char verdict) {
  std::string_view meaning;
  switch (verdict) {
    case 'I': meaning = "improvement"; break;
    case 'R': meaning = "regression"; break;
    case 'U': meaning = "unchanged"; break;
    case 'Q': meaning = "undecided"; break;
    default: throw std::invalid_argument(std::string("verdict_mark: no verdict '") + verdict + "' (I, R, U or Q)");
  }
  return std::string("<span class=\"verdict verdict-") + verdict + "\" title=\"" + std::string(meaning) + "\">" +
         verdict + "</span>";
}

void write_page(const Page& page, std::ostream& out) {
  nlohmann::json plots = nlohmann::json::array();
  for (const Plot& plot : page.plots) {
    nlohmann::json spec = plot.spec;
    // Vega-Lite gives the SVG its description as aria-label.
    if (!plot.alt.empty() && spec.is_object() && !spec.contains("description")) spec["description"] = plot.alt;
    plots.push_back({{"id", plot.id}, {"spec", std::move(spec)}});
  }

  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing to load: the libraries and data are inline. Vega compiles its
      // expressions with Function(), hence 'unsafe-eval'.
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; "
         "connect-src 'self'\">\n"
      << "<meta name=\"generator\" content=\"kbench (" << escape(library_versions()) << ")\">\n"
      << "<title>" << escape(page.title) << "</title>\n<style>" << style_sheet << "</style>\n</head>\n<body>\n"
      << "<noscript><p class=\"note\">The plots need JavaScript; the tables hold their numbers.</p></noscript>\n"
      << "<main>\n" << page.body << "\n</main>\n"
      << "<footer>Made by kbench. ";
  // A page without plots (the dashboard's index, an error page) is spared the
  // 0.8 MB of plotting libraries; kbenchEmbed is then never called.
  const bool draws = !page.plots.empty() || !page.script.empty();
  if (draws) out << "Plots drawn by " << escape(library_versions()) << ", inlined: ";
  out << "this page loads nothing.</footer>\n";
  for (const web::Library& library : web::libraries()) {
    if (!draws) break;
    out << "<script>/* " << library.name << ' ' << library.version << " */\n";
    write_script_text(library.name, library.script, out);
    out << "\n</script>\n";
  }
  out << "<script>\n";
  if (!page.data.is_null()) out << "window.kbenchData = " << json_for_script(page.data) << ";\n";
  out << "window.kbenchPlots = " << json_for_script(plots) << ";\n" << shell_script << "</script>\n";
  if (!page.script.empty()) {
    out << "<script>\n";
    write_script_text("the page's script", page.script, out);
    out << "\n</script>\n";
  }
  out << "</body>\n</html>\n";
}

}  // namespace kbench::report::html
