#include "common/temp_directory.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "common/errors.h"

namespace kbench {

namespace fs = std::filesystem;

TempDirectory::TempDirectory(const std::string& prefix, const std::string& parent) {
  std::error_code error;
  fs::path where = parent.empty() ? fs::temp_directory_path(error) : fs::path(parent);
  if (error) where = "/tmp";
  const std::string pattern = (where / (prefix + ".XXXXXX")).string();
  std::string made = pattern;  // mkdtemp fills in the Xs even when it fails
  if (!mkdtemp(made.data())) {
    throw RunError("cannot make a temporary directory " + pattern + ": " + std::strerror(errno));
  }
  path_ = std::move(made);
}

TempDirectory::~TempDirectory() { remove(); }

TempDirectory::TempDirectory(TempDirectory&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDirectory& TempDirectory::operator=(TempDirectory&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

void TempDirectory::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace kbench
