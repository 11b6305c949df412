#include "engine/write/flatten.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>

#include "engine/base/concat_file.h"
#include "engine/base/interrupt.h"
#include "engine/base/posix_file.h"
#include "engine/base/uuid.h"
#include "engine/format/data_file_name.h"
#include "engine/format/flat_manifest.h"
#include "engine/format/manifest_writer.h"
#include "engine/read/content_check.h"
#include "engine/read/restore.h"
#include "engine/read/restore_meta.h"

namespace stitchfs::engine {
namespace {

// Data file `name`, just written with entry `idx`'s bytes (copied from `segments`), read back
// from the storage and checked against the manifest before anything relies on it. On a mismatch
// the copies `segments` kept on the way are dropped and the entry is read once more from the
// backup to tell whose bytes are bad: the backup's (kBackupDamaged, naming the backups that may
// hold them), or the copy's (kIOError, as a failed write). `*copy_again` is set when the backup
// reads right and the copied bytes may have come from a copy kept on the way.
Status CheckCopy(const ResolvedBackup& chain, size_t idx, const std::vector<Segment>& segments,
                 BackupWriter& writer, const std::string& name, char* buf,
                 const CopyProgress& progress, bool* copy_again) {
  const std::span<char> span(buf, kCopyBuffer);
  const FileEntry e = chain.top().manifest().entry(idx);
  const std::string what = chain.top().Prefix() + "the copy of file \"" + std::string(e.name) +
                           "\", written as data file " + name + ", ";
  auto back = writer.ReadBack(name, e.size);
  const Status copied =
      back.ok() ? CheckFile(chain, idx, **back, span, progress, /*copy=*/true) : back.status();
  if (copied.ok()) return copied;
  // Missing, another length or other bytes: the copy's, or the backup's (read again below).
  if (copied.code() != ErrorCode::kBackupDamaged) {
    return copied.WithPrefix(what + "cannot be read back: ");
  }
  const std::string wrong = what + "reads back wrong (" + copied.message() + "); ";
  const bool kept = ConcatFile(segments).DropCached();  // Before the read below drops them.
  auto source = chain.OpenEntry(idx);
  Status again = source.ok() ? CheckFile(chain, idx, **source, span) : source.status();
  if (again.code() == ErrorCode::kBackupDamaged) return again;  // The backup's own bytes.
  // Otherwise a fault of writing the copy, as a failed write is (IO_ERROR, not the backup's).
  if (!again.ok()) {
    return Status(ErrorCode::kIOError,
                  wrong + "the backup could not be read again to tell whose bytes are bad: " +
                      again.ToString(),
                  EIO);
  }
  *copy_again = kept;
  return Status(ErrorCode::kIOError,
                wrong +
                    "the backup's own bytes read right, so they went wrong on the way (read, "
                    "copied or stored); nothing relies on the copy",
                EIO);
}

// Copies `segments` once more as data file `name` of `writer`, in place of the first copy
// (staged as `id`, then published over it).
Status CopyAgain(const std::vector<Segment>& segments, BackupWriter& writer, const std::string& id,
                 const std::string& name, char* buf) {
  ASSIGN_OR_RETURN(auto again, writer.CreateStaged(id, name));
  RETURN_IF_ERROR(CopySegments(segments, *again, buf, name));
  RETURN_IF_ERROR(again->Close());
  return writer.Publish(id, name);
}

// Writes the whole content of entry `idx` as the new data file `name`, and checks it. A copy
// that reads back wrong while the backup reads right, when the bytes copied may have come from
// copies kept on the way (RandomAccessFile::DropCached: a block cache that kept bytes changed in
// transit), is made once more from the storage, in place of the first.
Status WriteDataFile(const ResolvedBackup& chain, size_t idx, BackupWriter& writer,
                     const std::string& name, char* buf, const CopyProgress& progress) {
  // The segments' files are held through both copies: what they kept is what is dropped.
  ASSIGN_OR_RETURN(std::vector<Segment> segments, chain.OpenSegments(idx));
  ASSIGN_OR_RETURN(auto out, writer.CreateDataFile(name));
  RETURN_IF_ERROR(CopySegments(segments, *out, buf, name, progress));
  RETURN_IF_ERROR(out->Close());
  bool copy_again = false;
  Status s = CheckCopy(chain, idx, segments, writer, name, buf, progress, &copy_again);
  if (!copy_again) return s;
  const std::string id = "copy-again-" + std::to_string(idx);  // Staged, then put over the first.
  Status again = CopyAgain(segments, writer, id, name, buf);
  if (!again.ok()) return again.WithPrefix(s.message() + "; copying it again: ");
  return CheckCopy(chain, idx, segments, writer, name, buf, {}, &copy_again)
      .WithSuffix(" (copied twice, the second time after dropping what was kept on the way)");
}

}  // namespace

StatusOr<FlattenResult> FlattenBackup(const ResolvedBackup& chain, const std::string& dest,
                                      bool keep_uuid) {
  // The chain's own storage: one connection pool and one block cache for reading and writing.
  return FlattenBackup(chain, dest, keep_uuid, chain.storage());
}

StatusOr<FlattenResult> FlattenBackup(const ResolvedBackup& chain, const std::string& dest,
                                      bool keep_uuid, const Storage& storage,
                                      const CopyProgress& progress) {
  const std::string uuid = keep_uuid ? chain.top().manifest().header().uuid : NewUuid();
  std::string notice;
  ASSIGN_OR_RETURN(auto writer, storage.StartBackup(dest, WriterIntent{uuid, "", ""}, &notice));
  return FlattenInto(chain, *writer, uuid, "", progress);
}

StatusOr<FlattenResult> FlattenInto(const ResolvedBackup& chain, BackupWriter& writer,
                                    const std::string& uuid, const std::string& data_prefix,
                                    const CopyProgress& progress) {
  const Manifest& m = chain.top().manifest();
  FlattenResult r;
  r.uuid = uuid;
  auto buf = std::make_unique<char[]>(kCopyBuffer);
  std::vector<FileEntry> entries;
  std::map<std::pair<uint64_t, Checksum>, std::string> stored;  // content -> data file
  for (uint32_t i : m.by_name()) {
    FileEntry e = m.entry(i);
    e.base_size = 0;
    e.base_checksum = Checksum{};
    e.data_file = e.name;
    ++r.files;
    if (e.size > 0) {
      auto [it, first] =
          stored.emplace(std::make_pair(e.size, e.checksum), data_prefix + DataFileNameFor(e.name));
      if (first) {
        RETURN_IF_ERROR(WriteDataFile(chain, i, writer, it->second, buf.get(), progress));
        r.bytes_stored += e.size;
      } else if (progress) {
        progress(kFlattenPasses * e.size);  // Stored and read back once already.
      }
      e.data_file = it->second;
    }
    entries.push_back(e);
  }
  const ManifestHeader h = FlatHeader(m.header(), r.uuid);
  std::vector<Node> nodes;
  for (size_t i = 0; i < m.num_nodes(); ++i) nodes.push_back(m.node(i));
  std::string xml;
  RETURN_IF_ERROR(RenderManifest(h, entries, &xml, nodes, m.missing()));  // Still incomplete.
  RETURN_IF_ERROR(CheckStop());  // A stop asked for during the last read-back: no copy.
  RETURN_IF_ERROR(writer.Finish(xml));
  return r;
}

StatusOr<uint64_t> FlattenInPlace(const ResolvedBackup& chain, const std::string& path,
                                  StoreMoves& moves, const CopyProgress& progress) {
  const std::string uuid = chain.top().manifest().header().uuid;
  ASSIGN_OR_RETURN(std::unique_ptr<StoreReplacement> copy, moves.StartReplace(path, uuid));
  RETURN_IF_ERROR(FlattenInto(chain, *copy, uuid, copy->data_prefix(), progress).status());
  return copy->bytes_written();
}

}  // namespace stitchfs::engine
