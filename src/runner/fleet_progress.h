#pragma once
// The combined progress of several SUTs measured at once (plan exec with
// `suts:`). Each SUT's worker writes its own progress lines; this view shows
// them together: on a terminal one line per SUT, redrawn in place under the
// messages that must stay, otherwise every line prefixed "NAME: " so a CI log
// reads like the single-SUT output.
#include <cstdio>
#include <string>
#include <vector>

namespace kbench::runner {

class FleetProgress {
 public:
  // `live`: stderr is a terminal; `width`: its columns (lines are cut to
  // it, as a wrapped line would break the redraw).
  FleetProgress(std::FILE* out, bool live, std::vector<std::string> suts, int width = 80);

  // One line a SUT's worker wrote. Its step lines ("[3/8] ...") become the
  // SUT's status line on a terminal; anything else is kept on screen.
  void line(const std::string& sut, const std::string& text);
  // A line of the fleet's own ("lab-2: exited with status 1").
  void message(const std::string& text);
  // The status lines stay where they are; what follows goes below them.
  void finish();

 private:
  void clear_block();
  void draw_block();

  std::FILE* out_;
  bool live_;
  std::vector<std::string> suts_;
  std::vector<std::string> status_;
  int width_;
  bool drawn_ = false;
  std::size_t name_width_ = 0;
};

// A worker's progress line (what Progress prints when a step ends).
bool is_step_line(const std::string& text);
// A worker's line for a step that just started: "[3/8] base session 1 x ...".
bool is_step_start(const std::string& text);

}  // namespace kbench::runner
