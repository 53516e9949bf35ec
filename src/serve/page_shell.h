#pragma once
// The frame around the dashboard's own pages (index, errors): the report
// layer's page shell, so they look like the reports they link to.
#include <string>

namespace kbench::serve {

// A whole HTML document: title, a navigation line back to the index (on
// every page but the index itself), body.
enum class Navigation { BackToIndex, None };
std::string dashboard_page(const std::string& title, const std::string& body,
                           Navigation navigation = Navigation::BackToIndex);

// A report page (compare's, trend's) as served: with a link back to the
// index at the top.
std::string served_report(std::string html);

}  // namespace kbench::serve
