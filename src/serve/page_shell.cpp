#include "serve/page_shell.h"

namespace kbench::serve {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string dashboard_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title) +
         "</title><meta name=\"viewport\" content=\"width=device-width\"></head>\n<body><nav><a href=\"/\">kbench "
         "dashboard</a></nav><main>\n" +
         body + "</main></body></html>\n";
}

}  // namespace kbench::serve
