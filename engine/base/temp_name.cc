#include "engine/base/temp_name.h"

#include <signal.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace stitchfs::engine {
namespace {

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/PID/stat: when the process started, which tells a reused pid apart. ""
// if the process is gone or its entry cannot be read.
std::string StartTime(long pid) {
  const std::string line = FirstLine("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 > line.size()) return "";
  std::istringstream in(line.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && in >> field; ++i) {
  }
  return field;
}

// This boot and pid namespace as 16 hex digits: a pid means something only within both.
// "" if either cannot be learnt (then no temporary file is ever judged).
const std::string& Scope() {
  static const std::string scope = [] {
    const std::string boot = FirstLine("/proc/sys/kernel/random/boot_id");
    char ns[64] = {0};
    const ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    if (boot.empty() || n <= 0) return std::string();
    const std::string both = boot + "\n" + std::string(ns, static_cast<size_t>(n));
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(XXH3_64bits(both.data(), both.size())));
    return std::string(hex);
  }();
  return scope;
}

// Splits off the next '-'-terminated field of `s` (or the rest), true if it is not empty.
bool NextField(std::string_view* s, std::string_view* field) {
  const size_t dash = s->find('-');
  *field = s->substr(0, dash);
  s->remove_prefix(dash == std::string_view::npos ? s->size() : dash + 1);
  return !field->empty();
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::string TempSuffix() {
  static std::atomic<uint64_t> counter{0};
  // "<pid>-<start>-<scope>" of this process, learnt again after a fork (a child has its own).
  thread_local long pid = 0;
  thread_local std::string who;
  if (pid != static_cast<long>(::getpid())) {
    pid = static_cast<long>(::getpid());
    who = std::to_string(pid) + "-" + StartTime(pid) + "-" +
          (Scope().empty() ? std::string(16, '0') : Scope());
  }
  return ".tmp-" + who + "-" + std::to_string(counter++);
}

TempOwner OwnerOfTemp(std::string_view name) {
  const size_t at = name.rfind(".tmp");
  if (at == std::string_view::npos) return TempOwner::kNotTemp;
  std::string_view rest = name.substr(at + 4), pid_text, start, scope, n;
  if (rest.empty() || rest.front() != '-') return TempOwner::kUnknown;
  rest.remove_prefix(1);
  if (!NextField(&rest, &pid_text) || !NextField(&rest, &start) || !NextField(&rest, &scope) ||
      !NextField(&rest, &n) || !rest.empty() || !AllDigits(pid_text) || !AllDigits(start) ||
      !AllDigits(n) || Scope().empty() || scope != Scope()) {
    return TempOwner::kUnknown;
  }
  long pid = 0;
  const auto [end, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
  if (ec != std::errc() || pid <= 0 || pid > 0x3fffffff) return TempOwner::kUnknown;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return TempOwner::kDead;
  const std::string now = StartTime(pid);
  if (now.empty()) {
    // Alive a moment ago; its entry unreadable (hidepid) or it just ended: look once more.
    return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH ? TempOwner::kDead
                                                                     : TempOwner::kAlive;
  }
  return now == start ? TempOwner::kAlive : TempOwner::kDead;  // Else: the pid was reused.
}

}  // namespace stitchfs::engine
