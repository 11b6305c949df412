#include "engine/posix_meta.h"

#include <charconv>

namespace stitchfs::engine {
namespace {

template <typename T>
bool Field(std::string_view& s, T* out, int base = 10) {
  size_t end = s.find(' ');
  std::string_view f = s.substr(0, end);
  if (f.empty()) return false;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), *out, base);
  if (ec != std::errc() || p != f.data() + f.size()) return false;
  s = end == std::string_view::npos ? std::string_view() : s.substr(end + 1);
  return end != std::string_view::npos || s.empty();
}

}  // namespace

std::string PosixMeta::ToText() const {
  char mode_text[16];
  auto r = std::to_chars(mode_text, mode_text + sizeof(mode_text), mode, 8);
  return std::string(mode_text, r.ptr) + " " + std::to_string(uid) + " " + std::to_string(gid) +
         " " + std::to_string(mtime_ns) + " " + std::to_string(ctime_ns) + " " +
         std::to_string(ino) + " " + std::to_string(dev);
}

std::optional<PosixMeta> PosixMeta::Parse(std::string_view text, std::string_view* rest) {
  PosixMeta m;
  std::string_view s = text;
  bool ok = Field(s, &m.mode, 8) && Field(s, &m.uid) && Field(s, &m.gid) && Field(s, &m.mtime_ns) &&
            Field(s, &m.ctime_ns) && Field(s, &m.ino);
  if (!ok || m.mode > 07777) return std::nullopt;
  if (rest == nullptr) {
    if (!Field(s, &m.dev) || !s.empty()) return std::nullopt;
    return m;
  }
  size_t end = s.find(' ');
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view dev = s.substr(0, end);
  auto [p, ec] = std::from_chars(dev.data(), dev.data() + dev.size(), m.dev);
  if (dev.empty() || ec != std::errc() || p != dev.data() + dev.size()) return std::nullopt;
  *rest = s.substr(end + 1);
  return m;
}

std::string NodeToText(const Node& n) {
  std::string t = n.meta.ToText() + " ";
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
