// Progress and throughput of a run over many texts. On a terminal: one bar line redrawn in place
// (at most ~10 times a second): "[#####.....]  120/500 texts  85.3 texts/s  ETA 4s". Elsewhere
// (a log file, a pipe): nothing while running. Either way, finish() prints one summary line:
// "embedded 500 texts (6210 tokens) in 5.86 s: 85.3 texts/s, 1059.7 tokens/s".
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gguflow::embed {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  // `live`: draw the bar (pass is_terminal(log)). The clock starts now.
  Progress(FILE* log, int64_t total, bool live);

  // `done` texts of `total` finished, `tokens` evaluated so far.
  void update(int64_t done, int64_t tokens);
  // Prints a message (a warning) on its own line without garbling the bar.
  void message(const std::string& line);
  // Clears the bar and prints the summary line. Returns the elapsed seconds.
  double finish();

  // The bar line for a state (no '\r'); exposed so tests can check it without a terminal.
  static std::string bar_line(int64_t done, int64_t total, double seconds, int width = 24);
  static std::string summary_line(int64_t texts, int64_t tokens, double seconds);
  static std::string format_duration(double seconds);  // "4s", "2m05s", "1h03m"

 private:
  void draw(bool force);

  FILE* log_;
  int64_t total_;
  bool live_;
  int64_t done_ = 0, tokens_ = 0;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false;
  size_t drawn_width_ = 0;
};

// isatty() of the stream's descriptor.
bool is_terminal(FILE* stream);

}  // namespace gguflow::embed
