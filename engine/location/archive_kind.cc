#include "engine/location/archive_kind.h"

namespace stitchfs::engine {

namespace {

struct Extension {
  std::string_view ext;
  ArchiveKind kind;
};

constexpr Extension kExtensions[] = {
    {".zip", {ArchiveContainer::kZip, StreamCodec::kNone}},
    {".zipx", {ArchiveContainer::kZip, StreamCodec::kNone}},
    {".tar", {ArchiveContainer::kTar, StreamCodec::kNone}},
    {".tar.gz", {ArchiveContainer::kTar, StreamCodec::kGzip}},
    {".tgz", {ArchiveContainer::kTar, StreamCodec::kGzip}},
    {".tar.bz2", {ArchiveContainer::kTar, StreamCodec::kBzip2}},
    {".tar.xz", {ArchiveContainer::kTar, StreamCodec::kXz}},
    {".tar.lzma", {ArchiveContainer::kTar, StreamCodec::kLzma}},
    {".tar.zst", {ArchiveContainer::kTar, StreamCodec::kZstd}},
    {".tzst", {ArchiveContainer::kTar, StreamCodec::kZstd}},
};

}  // namespace

ArchiveKind ArchiveKindOf(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (const Extension& e : kExtensions) {
    if (name.size() > e.ext.size() && name.ends_with(e.ext)) return e.kind;
  }
  return {};
}

const char* ArchiveKindName(ArchiveKind kind) {
  if (kind.container == ArchiveContainer::kZip) return "zip";
  if (kind.container == ArchiveContainer::kNone) return "folder";
  switch (kind.codec) {
    case StreamCodec::kNone:
      return "tar";
    case StreamCodec::kGzip:
      return "tar.gz";
    case StreamCodec::kBzip2:
      return "tar.bz2";
    case StreamCodec::kXz:
      return "tar.xz";
    case StreamCodec::kLzma:
      return "tar.lzma";
    case StreamCodec::kZstd:
      return "tar.zst";
  }
  return "tar";
}

}  // namespace stitchfs::engine
