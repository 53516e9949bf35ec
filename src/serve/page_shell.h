#pragma once
// The frame around the dashboard's own pages (index, errors).
#include <string>
#include <string_view>

namespace kbench::serve {

std::string escape(std::string_view text);

// A whole HTML document: title, a navigation line back to the index, body.
std::string dashboard_page(const std::string& title, const std::string& body);

}  // namespace kbench::serve
