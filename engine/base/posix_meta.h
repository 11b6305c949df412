// PosixMeta and Node: the POSIX metadata stitchfs's writer records beside ClickHouse's fields
// (modes, owners, times, inode identity, directories and symlinks). ClickHouse ignores them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct timespec;

namespace stitchfs::engine {

// A file time as stat gives it: any time_t value with its nanoseconds, so times far from 1970
// (which overflow a count of nanoseconds in 64 bits) are kept exactly.
struct FileTime {
  int64_t sec = 0;
  int64_t nsec = 0;  // 0..999999999.

  static FileTime From(const struct timespec& t);
  struct timespec ToTimespec() const;
  // A count of nanoseconds when it fits in 64 bits, else "<sec>.<9 digits>".
  std::string ToText() const;
  static std::optional<FileTime> Parse(std::string_view text);
  friend auto operator<=>(const FileTime&, const FileTime&) = default;
};

struct PosixMeta {
  uint32_t mode = 0;  // Permission bits (07777), no file type.
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t nlink = 0;  // Files: the source's link count when backed up; 0 if not recorded.
  FileTime mtime;
  FileTime ctime;    // Of the source when backed up (for the files cache).
  uint64_t ino = 0;  // Source inode and device (the files cache; hard links, with nlink > 1).
  uint64_t dev = 0;

  // "644 1000 1000 <mtime> <ctime> <ino> <dev>[ <nlink>]" (mode in octal; nlink when set).
  std::string ToText() const;
  // Parses the 7 fields at the start of `text`; with `rest`, the text after the 7th field and
  // one space is stored there (for node leaves), otherwise an 8th field (nlink) may follow.
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
