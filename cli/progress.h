// Progress: a one-line progress bar on stderr when it is a terminal, silent otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace stitchfs::cli {

// Not thread-safe.
class Progress {
 public:
  // `what` labels the bar ("verify", "restore"); totals may be 0 when unknown.
  Progress(std::string what, uint64_t total_files, uint64_t total_bytes);
  ~Progress();
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
  std::chrono::steady_clock::time_point start_, last_;
};

// Shows each archive being indexed (ArchiveStorage) as a progress bar on stderr when it is a
// terminal. Called once at start by each front end.
void ShowArchiveIndexing();

// "1.5 GiB", "12 B".
std::string HumanBytes(uint64_t n);
// "45s", "3m05s", "2h04m".
std::string HumanDuration(uint64_t seconds);

}  // namespace stitchfs::cli
