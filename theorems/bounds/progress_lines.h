// SPDX-License-Identifier: MIT
//
// Progress of a long bound, as text lines handed to a sink the caller
// chooses (the CLI prints them on stderr; the bounds themselves never
// print). A line goes out at most once every `interval` seconds, the first
// one `interval` seconds after the start, so a run shorter than that says
// nothing:
//   due()         a sink is set and `interval` seconds passed since the
//                 start or the last line (one steady_clock read)
//   send(text)    hands "<elapsed> s: <text>" to the sink
// Not thread-safe: callers running in parallel hold a lock around
// due() and send().
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

namespace sinkcert::theorems::bounds {

// Receives one line of progress (no trailing newline).
using ProgressSink = std::function<void(const std::string&)>;

// Seconds between progress lines: a few, so that a run of more than about
// five seconds shows it is alive without flooding the terminal.
constexpr double kProgressSeconds = 3.0;

class ProgressLines {
 public:
  using Clock = std::chrono::steady_clock;

  ProgressLines() = default;
  explicit ProgressLines(ProgressSink sink, double interval = kProgressSeconds)
      : sink_(std::move(sink)), interval_(interval), start_(Clock::now()), last_(start_) {}

  bool active() const { return static_cast<bool>(sink_); }
  bool due() const {
    return sink_ && std::chrono::duration<double>(Clock::now() - last_).count() >= interval_;
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void send(const std::string& text) {
    if (!sink_) return;
    last_ = Clock::now();
    char head[32];
    std::snprintf(head, sizeof head, "%.1f s: ", elapsed());
    sink_(head + text);
  }

  // send(text()) when due; text is built only then.
  template <class Text>
  void maybe_send(const Text& text) {
    if (due()) send(text());
  }

 private:
  ProgressSink sink_;
  double interval_ = kProgressSeconds;
  Clock::time_point start_{}, last_{};
};

// "1.23e-03" (three significant digits), "inf" for an infinite value: the
// numbers of a progress line.
inline std::string progress_number(double x) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3g", x);
  return s;
}

}  // namespace sinkcert::theorems::bounds
