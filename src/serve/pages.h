#pragma once
// The dashboard's pages as functions of the store and the query string,
// without HTTP: the server (server.cpp) only maps paths and methods to them,
// and tests can call them directly.
#include <map>
#include <string>

namespace kbench::serve {

// A query string's parameters; a name may repeat (test=B&test=C).
using Query = std::multimap<std::string, std::string>;

struct Reply {
  int status = 200;
  std::string html;  // always a whole page, errors too
};

// "/": the SUTs and swprofiles of the store, and the form that asks for a
// comparison (and a trend).
Reply index_page(const std::string& store_url, const Query& query);

// "/compare?base=A&test=B[&test=C][&benchmark=GLOB]...": compare's html
// report. A bad parameter is a 400 naming it.
Reply compare_page(const std::string& store_url, const Query& query);

// "/trend?swprofile=GLOB[&benchmark=GLOB]...": trend's html report (its
// change points marked).
Reply trend_page(const std::string& store_url, const Query& query);

// A small page saying what went wrong: 400 bad request, 404, 405, 500.
Reply error_page(int status, const std::string& message);

}  // namespace kbench::serve
