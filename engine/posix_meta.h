// PosixMeta and Node: the POSIX metadata stitchfs's writer records beside ClickHouse's fields
// (modes, owners, times, inode identity, directories and symlinks). ClickHouse ignores them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stitchfs::engine {

struct PosixMeta {
  uint32_t mode = 0;  // Permission bits (07777), no file type.
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t mtime_ns = 0;  // Nanoseconds since the epoch.
  int64_t ctime_ns = 0;  // Of the source when backed up (for the files cache).
  uint64_t ino = 0;      // Source inode and device: equal for hard links of one file.
  uint64_t dev = 0;

  // "644 1000 1000 <mtime> <ctime> <ino> <dev>" (mode in octal).
  std::string ToText() const;
  // Parses the 7 fields at the start of `text`; with `rest`, the text after the 7th field and
  // one space is stored there (for node leaves), otherwise nothing may follow.
  static std::optional<PosixMeta> Parse(std::string_view text, std::string_view* rest = nullptr);
  friend bool operator==(const PosixMeta&, const PosixMeta&) = default;
};

enum class NodeType { kDir, kSymlink };

// A directory or symlink of the backed-up tree (regular files are manifest entries).
struct Node {
  NodeType type = NodeType::kDir;
  std::string_view name;
  std::string_view target;  // Symlinks only.
  PosixMeta meta;
};

// The text of a node leaf: meta fields, then (symlinks) the name's byte length, then the name
// and (symlinks) the target. And its parser; nullopt if malformed.
std::string NodeToText(const Node& n);
std::optional<Node> NodeFromText(NodeType type, std::string_view text);

}  // namespace stitchfs::engine
