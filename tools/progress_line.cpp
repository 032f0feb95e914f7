#include "progress_line.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

namespace onda::cli {

std::string three_digits(double value) {
  if (!std::isfinite(value)) return "-";
  if (std::fabs(value) >= 100) return fmt::format("{:.0f}", value);
  if (std::fabs(value) >= 10) return fmt::format("{:.1f}", value);
  if (std::fabs(value) >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3g}", value);
}

std::string duration_text(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, (s % 3600) / 60);
}

ProgressLine::ProgressLine(std::string label, double audio_seconds, bool enabled)
    : label_(std::move(label)),
      audio_seconds_(audio_seconds),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() {
  if (drawn_) fmt::print(stderr, "\n");
}

void ProgressLine::update(int64_t done, int64_t total) {
  if (!enabled_ || total <= 0) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string line = fmt::format("{} [{}{}] {}/{} segments", label_, std::string(filled, '#'),
                                 std::string(kWidth - filled, ' '), done, total);
  if (done > 0 && elapsed > 0) {
    line += fmt::format(", {} s audio/s, {} left", three_digits(fraction * audio_seconds_ / elapsed),
                        done < total ? duration_text(elapsed / fraction - elapsed) : "0 s");
  }
  const size_t width = line.size();
  if (width < width_) line += std::string(width_ - width, ' ');
  width_ = width;
  fmt::print(stderr, "\r{}", line);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace onda::cli
