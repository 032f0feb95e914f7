// One line on a terminal, redrawn in place per segment: segments done, audio seconds per wall
// second and the time left. Drawn at once (0 segments) so a slow first model call shows something.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace onda::cli {

class ProgressLine {
 public:
  ProgressLine(std::string label, double audio_seconds, bool enabled);
  ~ProgressLine();
  void update(int64_t done, int64_t total);

 private:
  std::string label_;
  double audio_seconds_;
  bool enabled_, drawn_ = false;
  size_t width_ = 0;  // of the last line drawn, to blank a longer one's tail
  std::chrono::steady_clock::time_point start_;
};

// Three significant digits, without an exponent: 0.0342, 1.23, 12.3, 123, 1234.
std::string three_digits(double value);
// 7 s, 1 min 05 s, 2 h 03 min.
std::string duration_text(double seconds);

}  // namespace onda::cli
