// ProgressBar: a one-line progress bar on stderr when it is a terminal, silent otherwise; and
// TerminalProgress, a ProgressSink that draws each task as such a bar. What both front ends
// show (stitch's commands, stitchfs while it opens a backup).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/base/progress.h"

namespace stitchfs::engine {

// Not thread-safe.
class ProgressBar {
 public:
  // `what` labels the bar ("verify", "restore"); totals may be 0 when unknown. Drawn unless
  // stderr is not a terminal or STITCH_NO_PROGRESS is set.
  ProgressBar(std::string what, uint64_t total_files, uint64_t total_bytes);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  // Redraws at most ~10 times a second, and at the end: files of bytes done and the rate and
  // the time left ("ETA") from the average rate so far.
  void Update(uint64_t files, uint64_t bytes);
  void SetTotals(uint64_t files, uint64_t bytes) {
    total_files_ = files;
    total_bytes_ = bytes;
  }
  // Clears the bar (before printing results).
  void Done();

 private:
  void Draw(uint64_t files, uint64_t bytes);
  std::string what_;
  uint64_t total_files_;
  uint64_t total_bytes_;
  bool enabled_;
  bool drawn_ = false;
  const std::chrono::microseconds frame_;
  std::chrono::steady_clock::time_point start_, last_;
};

// A sink that shows each task as a ProgressBar in bytes labelled "<verb> <last component of
// the task's name>" ("index b1.zip"), one task at a time (a new task replaces the bar; a task
// that is done clears it). Thread-safe: tasks reported from several threads take turns.
ProgressSink TerminalProgress(std::string verb);

// "1.5 GiB", "12 B".
std::string HumanBytes(uint64_t n);
// "45s", "3m05s", "2h04m".
std::string HumanDuration(uint64_t seconds);

}  // namespace stitchfs::engine
