#include "engine/base/progress_bar.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace stitchfs::engine {

std::string HumanBytes(uint64_t n) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string HumanDuration(uint64_t seconds) {
  char buf[32];
  if (seconds < 60) {
    std::snprintf(buf, sizeof(buf), "%llus", static_cast<unsigned long long>(seconds));
  } else if (seconds < 3600) {
    std::snprintf(buf, sizeof(buf), "%llum%02llus", static_cast<unsigned long long>(seconds / 60),
                  static_cast<unsigned long long>(seconds % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lluh%02llum", static_cast<unsigned long long>(seconds / 3600),
                  static_cast<unsigned long long>(seconds / 60 % 60));
  }
  return buf;
}

namespace {

// The bar's redraws at most: STITCH_PROGRESS_FPS times a second (1 to 1000; 10 if unset or not
// a number in that range), for a slow terminal or a log that records every frame.
std::chrono::microseconds FrameTime() {
  long fps = 10;
  if (const char* v = std::getenv("STITCH_PROGRESS_FPS")) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && n >= 1 && n <= 1000) fps = n;
  }
  return std::chrono::microseconds(1000000 / fps);
}

}  // namespace

ProgressBar::ProgressBar(std::string what, uint64_t total_files, uint64_t total_bytes)
    : what_(std::move(what)),
      total_files_(total_files),
      total_bytes_(total_bytes),
      enabled_(::isatty(STDERR_FILENO) && std::getenv("STITCH_NO_PROGRESS") == nullptr),
      frame_(FrameTime()),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() { Done(); }

void ProgressBar::Update(uint64_t files, uint64_t bytes) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  // The last state is always drawn; anything else at most once a frame.
  const bool last = (total_files_ > 0 && files >= total_files_) ||
                    (total_files_ == 0 && total_bytes_ > 0 && bytes >= total_bytes_);
  if (drawn_ && now - last_ < frame_ && !last) return;
  last_ = now;
  Draw(files, bytes);
}

void ProgressBar::Draw(uint64_t files, uint64_t bytes) {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = secs > 0 ? static_cast<double>(bytes) / secs : 0;
  const double frac = total_bytes_ ? static_cast<double>(bytes) / static_cast<double>(total_bytes_)
                      : total_files_
                          ? static_cast<double>(files) / static_cast<double>(total_files_)
                          : 0;
  constexpr int kWidth = 24;
  std::string bar(kWidth, ' ');
  for (int i = 0; i < static_cast<int>(frac * kWidth) && i < kWidth; ++i) bar[i] = '#';
  std::string eta = "--";
  if (rate > 0 && total_bytes_ > bytes && secs >= 0.5) {  // (The first moments mislead.)
    eta = HumanDuration(static_cast<uint64_t>(static_cast<double>(total_bytes_ - bytes) / rate));
  }
  std::string counts;  // Left out for work counted in bytes alone (indexing an archive).
  if (total_files_ > 0 || files > 0) {
    counts = std::to_string(files) + "/" + std::to_string(total_files_) + " files ";
  }
  std::fprintf(stderr, "\r%s [%s] %3.0f%% %s%s/%s %s/s ETA %s\033[K", what_.c_str(), bar.c_str(),
               frac * 100, counts.c_str(), HumanBytes(bytes).c_str(),
               HumanBytes(total_bytes_).c_str(), HumanBytes(static_cast<uint64_t>(rate)).c_str(),
               eta.c_str());
  drawn_ = true;
}

void ProgressBar::Done() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

ProgressSink TerminalProgress(std::string verb) {
  struct Shown {
    std::mutex mu;  // Mount threads may index archives at once: one bar at a time.
    std::unique_ptr<ProgressBar> bar;
    std::string task;
  };
  auto shown = std::make_shared<Shown>();
  return [shown, verb = std::move(verb)](const std::string& task, uint64_t done, uint64_t total) {
    std::lock_guard<std::mutex> lock(shown->mu);
    if (!shown->bar || shown->task != task) {
      const size_t slash = task.rfind('/');
      shown->bar = std::make_unique<ProgressBar>(verb + " " + task.substr(slash + 1), 0, total);
      shown->task = task;
    }
    shown->bar->Update(0, done);
    if (done >= total) {
      shown->bar.reset();
      shown->task.clear();
    }
  };
}

}  // namespace stitchfs::engine
