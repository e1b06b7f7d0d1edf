#include "runtime/embed/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace gguflow::embed {
namespace {

// Redraws of the bar at most this often; a run of thousands of tiny texts stays cheap.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

double seconds_between(Progress::Clock::time_point a, Progress::Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

bool is_terminal(FILE* stream) { return isatty(fileno(stream)) == 1; }

Progress::Progress(FILE* log, int64_t total, bool live)
    : log_(log), total_(total), live_(live), start_(Clock::now()), last_draw_(start_) {}

std::string Progress::format_duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  return buf;
}

std::string Progress::bar_line(int64_t done, int64_t total, double seconds, int width) {
  const double fraction = total > 0 ? std::clamp(double(done) / double(total), 0.0, 1.0) : 1.0;
  const int filled = static_cast<int>(fraction * width);
  std::string line = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
  const std::string total_text = std::to_string(total);
  std::string done_text = std::to_string(done);
  if (done_text.size() < total_text.size()) done_text.insert(0, total_text.size() - done_text.size(), ' ');
  line += done_text + "/" + total_text + " texts";
  if (done > 0 && seconds > 0) {
    const double rate = done / seconds;
    line += "  " + fixed(rate, 1) + " texts/s";
    line += "  ETA " + format_duration((total - done) / rate);
  } else {
    line += "  ETA ?";
  }
  return line;
}

std::string Progress::summary_line(int64_t texts, int64_t tokens, double seconds) {
  const double s = std::max(seconds, 1e-9);
  return "embedded " + std::to_string(texts) + " text" + (texts == 1 ? "" : "s") + " (" +
         std::to_string(tokens) + " tokens) in " + fixed(seconds, 2) + " s: " + fixed(texts / s, 1) +
         " texts/s, " + fixed(tokens / s, 1) + " tokens/s";
}

void Progress::draw(bool force) {
  if (!live_) return;
  const auto now = Clock::now();
  if (!force && drawn_ && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  const std::string line = bar_line(done_, total_, seconds_between(start_, now));
  // Pad with spaces over a longer previous line (the rate text can shrink).
  std::string padded = line;
  if (padded.size() < drawn_width_) padded.append(drawn_width_ - padded.size(), ' ');
  std::fprintf(log_, "\r%s", padded.c_str());
  std::fflush(log_);
  drawn_ = true;
  drawn_width_ = line.size();
}

void Progress::update(int64_t done, int64_t tokens) {
  done_ = done;
  tokens_ = tokens;
  draw(done == total_);
}

void Progress::message(const std::string& line) {
  if (live_ && drawn_) std::fprintf(log_, "\r%s\r", std::string(drawn_width_, ' ').c_str());
  std::fprintf(log_, "%s\n", line.c_str());
  if (live_ && drawn_) draw(true);
  std::fflush(log_);
}

double Progress::finish() {
  const double seconds = seconds_between(start_, Clock::now());
  if (live_ && drawn_) std::fprintf(log_, "\n");
  std::fprintf(log_, "%s\n", summary_line(done_, tokens_, seconds).c_str());
  std::fflush(log_);
  return seconds;
}

}  // namespace gguflow::embed
