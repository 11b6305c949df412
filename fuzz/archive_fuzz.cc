// libFuzzer target for the archive parsers (engine/backends/archive/): the first byte picks what
// the rest is taken for. 0: a zip archive (ReadZipDirectory, then every stored or deflate member
// indexed and read back), 1: a tar stream (TarScanner fed in pieces), 2: a gzip file (restart
// points indexed, then reads through them must give exactly what the one pass decoded), 3: a cached
// archive index (DecodeArchiveIndex). Every offset found must lie within the input; errors must
// be BACKUP_DAMAGED or NOT_SUPPORTED; nothing may crash, hang or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "engine/backends/archive/archive_index.h"
#include "engine/backends/archive/archive_reader.h"
#include "engine/backends/archive/inflate_points.h"
#include "engine/backends/archive/tar_scanner.h"
#include "engine/backends/archive/zip_directory.h"
#include "engine/base/string_file.h"
#include "fuzz/fuzz_common.h"

namespace {

using namespace stitchfs::engine;
using stitchfs::fuzz::Require;

constexpr uint64_t kMaxOutput = 8 << 20;  // Deflate bombs stop here.

using Bytes = StringFile;

void RequireArchiveError(const Status& s) {
  Require(s.code() == ErrorCode::kBackupDamaged || s.code() == ErrorCode::kNotSupported,
          "archive error code", s.ToString());
}

// Indexes `[offset, offset + length)` of `file` as deflate (or gzip), then reads the output
// back through the restart points and requires the same bytes.
void CheckDeflate(const std::shared_ptr<const Bytes>& file, uint64_t offset, uint64_t length,
                  bool gzip) {
  ArchiveIndex index;
  std::string decoded;
  DecodePass pass;
  pass.file = file.get();
  pass.display = "fuzz";
  pass.sink = [&](std::span<const char> d) {
    if (decoded.size() + d.size() > kMaxOutput) return Status::BackupDamaged("too large");
    decoded.append(d.data(), d.size());
    return Status::OK();
  };
  uint32_t crc;
  auto s = IndexDeflate(pass, offset, length, gzip, &index, &crc);
  if (!s.ok()) return RequireArchiveError(s.status());
  Require(s->out_size == decoded.size(), "deflate output size");
  Require(s->in_offset + s->in_length <= file->size(), "deflate input within the file");
  index.streams.push_back(*s);
  auto reader = std::make_shared<const ArchiveReader>(file, std::move(index), UniqueFd(), "fuzz",
                                                      nullptr, ArchiveStamp{});
  for (uint64_t at = 0; at < decoded.size(); at += 4093) {
    std::string got(std::min<size_t>(10000, decoded.size() - at), '\0');
    Require(reader->ReadStream(reader->index().streams[0], at, got).ok(), "read from a point");
    Require(got == decoded.substr(at, got.size()), "restart point gives other bytes");
  }
}

void Zip(const std::shared_ptr<const Bytes>& file) {
  auto entries = ReadZipDirectory(*file, "fuzz");
  if (!entries.ok()) return RequireArchiveError(entries.status());
  for (const ZipEntry& e : *entries) {
    Require(e.data_offset <= file->size() && e.packed_size <= file->size() - e.data_offset,
            "zip member within the archive");
    if (e.method == 8) CheckDeflate(file, e.data_offset, e.packed_size, false);
  }
}

void Tar(std::string_view data) {
  TarScanner scanner("fuzz");
  size_t at = 0;
  Status s;
  for (size_t piece = 1; at < data.size() && s.ok(); piece = piece * 3 % 1031 + 1) {
    const size_t n = std::min(piece, data.size() - at);
    s = scanner.Feed(data.substr(at, n));
    at += n;
  }
  if (s.ok()) s = scanner.Finish();
  if (!s.ok()) return RequireArchiveError(s);
  for (const ArchiveMember& m : scanner.members()) {
    Require(m.offset <= data.size() && m.size <= data.size() - m.offset,
            "tar member within the stream");
    Require(!m.name.empty() && m.name.back() != '/', "tar member names a file");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto file = std::make_shared<const Bytes>(rest);
  switch (data[0] % 4) {
    case 0:
      Zip(file);
      break;
    case 1:
      Tar(rest);
      break;
    case 2:
      CheckDeflate(file, 0, rest.size(), true);
      break;
    case 3: {
      const ArchiveStamp stamp{1, 2, 1 << 20, {3, 4}, {5, 6}};
      auto index = DecodeArchiveIndex(rest, stamp);
      if (!index.ok()) RequireArchiveError(index.status());
      break;
    }
  }
  return 0;
}
