// Helpers for tests of a Namespace (BackupView, StoreView): paths walked name by name, whole
// listings, whole files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fs/namespace.h"

namespace stitchfs::fs::fstest {

// The inode at `path` ("a/b"; "" is `from` itself), looked up one name at a time from `from`.
inline engine::StatusOr<uint64_t> Walk(const Namespace& ns, std::string_view path,
                                       uint64_t from = 1) {
  uint64_t ino = from;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    ASSIGN_OR_RETURN(ino, ns.Lookup(ino, path.substr(0, slash)));
    path = slash == std::string_view::npos ? "" : path.substr(slash + 1);
  }
  return ino;
}

// Every entry of folder `ino`, asked for `chunk` at a time.
inline engine::StatusOr<std::vector<DirEntry>> List(const Namespace& ns, uint64_t ino,
                                                    size_t chunk = 3) {
  std::vector<DirEntry> all;
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<DirEntry> part, ns.ReadDir(ino, all.size(), chunk));
    if (part.size() > chunk) return engine::Status::Internal("more entries than asked for");
    if (part.empty()) return all;
    all.insert(all.end(), part.begin(), part.end());
  }
}

inline std::vector<std::string> Names(const std::vector<DirEntry>& entries) {
  std::vector<std::string> out;
  for (const DirEntry& e : entries) out.push_back(e.name);
  return out;
}

// The names in folder `ino`, or the error's text as the only name.
inline std::vector<std::string> NamesIn(const Namespace& ns, uint64_t ino) {
  auto list = List(ns, ino);
  return list.ok() ? Names(*list) : std::vector<std::string>{list.status().ToString()};
}

// The whole content of file `ino`, read in pieces of `piece` bytes.
inline engine::StatusOr<std::string> ReadAll(const Namespace& ns, uint64_t ino,
                                             size_t piece = 1000) {
  ASSIGN_OR_RETURN(auto file, ns.Open(ino));
  std::string out, buf(piece, '\0');
  for (;;) {
    ASSIGN_OR_RETURN(size_t n, file->ReadAt(out.size(), std::span<char>(buf)));
    if (n == 0) return out;
    out.append(buf, 0, n);
  }
}

}  // namespace stitchfs::fs::fstest
