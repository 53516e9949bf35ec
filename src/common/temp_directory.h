#pragma once
// A directory of kbench's own with a name no other process has, removed with
// everything in it when its owner ends.
#include <string>

namespace kbench {

class TempDirectory {
 public:
  // Made in `parent` (by default the system's temporary directory: $TMPDIR,
  // else /tmp) as PREFIX.XXXXXX; RunError naming the pattern when it cannot be.
  explicit TempDirectory(const std::string& prefix, const std::string& parent = "");
  ~TempDirectory();
  TempDirectory(TempDirectory&& other) noexcept;
  TempDirectory& operator=(TempDirectory&& other) noexcept;
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  void remove() noexcept;
  std::string path_;  // empty once moved from
};

}  // namespace kbench
