#include "common/spoken_list.h"

namespace kbench {

std::string spoken_list(const std::vector<std::string_view>& words, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " " + std::string(last) + " " : ", ";
    out += words[i];
  }
  return out;
}

std::string spoken_list(const std::vector<std::string>& words, std::string_view last) {
  return spoken_list(std::vector<std::string_view>(words.begin(), words.end()), last);
}

}  // namespace kbench
