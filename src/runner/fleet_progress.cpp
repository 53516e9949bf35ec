#include "runner/fleet_progress.h"

#include <algorithm>

namespace kbench::runner {

bool is_step_line(const std::string& text) {
  // "[3/8] base session 1 syscall/getppid: 2 repeats in 0.4s"
  if (text.size() < 5 || text[0] != '[') return false;
  const auto close = text.find("] ");
  const auto slash = text.find('/');
  return close != std::string::npos && slash != std::string::npos && slash < close;
}

FleetProgress::FleetProgress(std::FILE* out, bool live, std::vector<std::string> suts, int width)
    : out_(out), live_(live), suts_(std::move(suts)), status_(suts_.size(), "starting"), width_(std::max(20, width)) {
  for (const auto& name : suts_) name_width_ = std::max(name_width_, name.size());
}

void FleetProgress::clear_block() {
  if (!live_ || !drawn_) return;
  // Up to the first status line, then clear everything below it.
  std::fprintf(out_, "\r\033[%zuA\033[J", suts_.size());
  drawn_ = false;
}

void FleetProgress::draw_block() {
  if (!live_) return;
  for (std::size_t i = 0; i < suts_.size(); ++i) {
    std::string text = suts_[i] + std::string(name_width_ - suts_[i].size(), ' ') + "  " + status_[i];
    if (text.size() >= static_cast<std::size_t>(width_)) text.resize(static_cast<std::size_t>(width_) - 1);
    std::fprintf(out_, "%s\n", text.c_str());
  }
  drawn_ = true;
  std::fflush(out_);
}

bool is_step_start(const std::string& text) {
  return is_step_line(text) && text.size() > 4 && text.compare(text.size() - 4, 4, " ...") == 0;
}

void FleetProgress::line(const std::string& sut, const std::string& text) {
  if (!live_) {
    // A log has the step's end line, with its result; its start adds nothing.
    if (is_step_start(text)) return;
    std::fprintf(out_, "%s: %s\n", sut.c_str(), text.c_str());
    std::fflush(out_);
    return;
  }
  const auto at = std::find(suts_.begin(), suts_.end(), sut);
  clear_block();
  if (at != suts_.end() && is_step_line(text)) {
    status_[static_cast<std::size_t>(at - suts_.begin())] = text;
  } else {
    std::fprintf(out_, "%s: %s\n", sut.c_str(), text.c_str());
  }
  draw_block();
}

void FleetProgress::message(const std::string& text) {
  clear_block();
  std::fprintf(out_, "%s\n", text.c_str());
  draw_block();
  if (!live_) std::fflush(out_);
}

void FleetProgress::finish() {
  drawn_ = false;
  std::fflush(out_);
}

}  // namespace kbench::runner
