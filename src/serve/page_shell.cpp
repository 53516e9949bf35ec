#include "serve/page_shell.h"

#include <sstream>

#include "report/html_page.h"

namespace kbench::serve {

namespace {

constexpr const char* kNavigation = "<nav><a href=\"/\">&larr; kbench dashboard</a></nav>\n";

}  // namespace

std::string dashboard_page(const std::string& title, const std::string& body, Navigation navigation) {
  report::html::Page page;
  page.title = title;
  page.body = (navigation == Navigation::BackToIndex ? kNavigation : "") + body;
  std::ostringstream out;
  report::html::write_page(page, out);
  return out.str();
}

std::string served_report(std::string html) {
  // Into <main>, where the shell's style sheet gives it the page's margins.
  const auto main = html.find("<main>\n");
  if (main != std::string::npos) html.insert(main + 7, kNavigation);
  return html;
}

}  // namespace kbench::serve
