#include "engine/base/posix_meta.h"

#include <time.h>

#include <charconv>

namespace stitchfs::engine {
namespace {

constexpr int64_t kNs = 1000000000;

template <typename T>
bool Number(std::string_view f, T* out, int base = 10) {
  if (f.empty()) return false;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), *out, base);
  return ec == std::errc() && p == f.data() + f.size();
}

// Takes the next space-separated field of `s`.
std::string_view Next(std::string_view& s, bool* last) {
  const size_t end = s.find(' ');
  const std::string_view f = s.substr(0, end);
  *last = end == std::string_view::npos;
  s = *last ? std::string_view() : s.substr(end + 1);
  return f;
}

template <typename T>
bool Field(std::string_view& s, T* out, int base = 10) {
  bool last;
  return Number(Next(s, &last), out, base) && (!last || s.empty());
}

bool TimeField(std::string_view& s, FileTime* out) {
  bool last;
  auto t = FileTime::Parse(Next(s, &last));
  if (!t) return false;
  *out = *t;
  return !last || s.empty();
}

}  // namespace

FileTime FileTime::From(const struct timespec& t) { return {t.tv_sec, t.tv_nsec}; }

struct timespec FileTime::ToTimespec() const {
  struct timespec t;
  t.tv_sec = static_cast<time_t>(sec);
  t.tv_nsec = static_cast<long>(nsec);
  return t;
}

std::string FileTime::ToText() const {
  const __int128 ns = static_cast<__int128>(sec) * kNs + nsec;
  if (ns >= INT64_MIN && ns <= INT64_MAX) return std::to_string(static_cast<int64_t>(ns));
  std::string frac = std::to_string(nsec);
  return std::to_string(sec) + "." + std::string(9 - frac.size(), '0') + frac;
}

std::optional<FileTime> FileTime::Parse(std::string_view text) {
  FileTime t;
  const size_t dot = text.find('.');
  if (dot != std::string_view::npos) {
    const std::string_view frac = text.substr(dot + 1);
    if (frac.size() != 9 || frac.front() == '-' || !Number(text.substr(0, dot), &t.sec) ||
        !Number(frac, &t.nsec)) {
      return std::nullopt;
    }
    return t;
  }
  int64_t ns = 0;
  if (!Number(text, &ns)) return std::nullopt;
  t.sec = ns / kNs;
  t.nsec = ns % kNs;
  if (t.nsec < 0) {
    t.nsec += kNs;
    t.sec -= 1;
  }
  return t;
}

std::string PosixMeta::ToText() const {
  char mode_text[16];
  auto r = std::to_chars(mode_text, mode_text + sizeof(mode_text), mode, 8);
  std::string t = std::string(mode_text, r.ptr) + " " + std::to_string(uid) + " " +
                  std::to_string(gid) + " " + mtime.ToText() + " " + ctime.ToText() + " " +
                  std::to_string(ino) + " " + std::to_string(dev);
  if (nlink != 0) t += " " + std::to_string(nlink);
  return t;
}

std::optional<PosixMeta> PosixMeta::Parse(std::string_view text, std::string_view* rest) {
  PosixMeta m;
  std::string_view s = text;
  bool ok = Field(s, &m.mode, 8) && Field(s, &m.uid) && Field(s, &m.gid) &&
            TimeField(s, &m.mtime) && TimeField(s, &m.ctime) && Field(s, &m.ino);
  if (!ok || m.mode > 07777) return std::nullopt;
  bool last;
  if (!Number(Next(s, &last), &m.dev)) return std::nullopt;
  if (rest != nullptr) {  // A node: its name (and target) follow.
    if (last) return std::nullopt;
    *rest = s;
    return m;
  }
  if (last) return m;
  if (!Number(Next(s, &last), &m.nlink) || !last || m.nlink == 0) return std::nullopt;
  return m;
}

std::string NodeToText(const Node& n) {
  PosixMeta m = n.meta;
  m.nlink = 0;  // Only files record a link count.
  std::string t = m.ToText() + " ";
  if (n.type == NodeType::kSymlink) t += std::to_string(n.name.size()) + " ";
  t.append(n.name);
  if (n.type == NodeType::kSymlink) t.append(n.target);
  return t;
}

std::optional<Node> NodeFromText(NodeType type, std::string_view text) {
  Node n;
  n.type = type;
  std::string_view rest;
  auto meta = PosixMeta::Parse(text, &rest);
  if (!meta) return std::nullopt;
  n.meta = *meta;
  if (type == NodeType::kDir) {
    n.name = rest;
    return n;
  }
  size_t len = 0;
  size_t sp = rest.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + sp, len);
  if (ec != std::errc() || p != rest.data() + sp || len > rest.size() - sp - 1) return std::nullopt;
  n.name = rest.substr(sp + 1, len);
  n.target = rest.substr(sp + 1 + len);
  return n;
}

}  // namespace stitchfs::engine
