#include "engine/read/resolved_backup.h"

#include <unordered_map>

#include "engine/base/concat_file.h"
#include "engine/format/data_file_name.h"
#include "engine/location/s3_address.h"

namespace stitchfs::engine {

bool Unchanged(const FileEntry& a, const FileEntry& b) {
  if (a.size != b.size || a.checksum != b.checksum || a.meta.has_value() != b.meta.has_value())
    return false;
  if (!a.meta) return true;
  return a.meta->mode == b.meta->mode && a.meta->uid == b.meta->uid && a.meta->gid == b.meta->gid &&
         a.meta->mtime == b.meta->mtime;
}

std::string_view ResolvedBackup::FileName(uint32_t file) const {
  const DataFileName& f = t_.files[file];
  if (f.length == kEntryName) return top_->manifest().name(f.offset);
  return t_.names.substr(f.offset, f.length);
}

size_t ResolvedBackup::Rep(size_t entry) const { return top_->manifest().ContentRep(entry); }

std::vector<ResolvedBackup::FlatExtent> ResolvedBackup::Extents(size_t entry) const {
  const size_t r = Rep(entry);
  const std::span<const uint32_t> first = t_.first_extent;
  if (!first.empty() && first[r + 1] > first[r]) {
    return {t_.extents.begin() + first[r], t_.extents.begin() + first[r + 1]};
  }
  const FileEntry e = top_->manifest().entry(r);
  if (e.size == 0) return {};
  return {{kOwnFile, 0, e.size}};
}

ResolvedBackup::Origin ResolvedBackup::origin(size_t entry) const {
  return t_.origins.empty() ? Origin{0, static_cast<uint32_t>(entry)} : t_.origins[entry];
}

StatusOr<std::shared_ptr<const BackupDataFile>> ResolvedBackup::OpenNamed(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& name,
    uint64_t length) const {
  auto object = ParseObjectDataFileName(name);
  if (!object) return storage_->OpenDataFile(folder, name, length);
  // A lightweight snapshot's file: an object of the source's object storage.
  auto bucket = storage_->OpenFolder(object->bucket_url);
  if (!bucket.ok()) {
    return bucket.status().WithPrefix("Backup " + folder->path() + ": object " + object->key +
                                      " of " + RedactUrl(object->bucket_url) +
                                      " (a lightweight snapshot): ");
  }
  return storage_->OpenDataFile(*bucket, object->key, length);
}

StatusOr<std::shared_ptr<const BackupDataFile>> ResolvedBackup::OpenDataFile(
    size_t rep, const FlatExtent& x) const {
  const bool own = x.file == kOwnFile;
  const uint64_t key = own ? rep : (uint64_t{1} << 32) | x.file;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto cached = open_[key].lock()) return cached;
  std::string name(own ? top_->manifest().entry(rep).data_file : FileName(x.file));
  ASSIGN_OR_RETURN(auto file, OpenNamed(t_.levels[x.level]->folder, name, x.length));
  open_[key] = file;
  if (++inserts_ % 1024 == 0) {  // Forget the files no reader holds any more.
    std::erase_if(open_, [](const auto& kv) { return kv.second.expired(); });
  }
  return file;
}

StatusOr<std::vector<Segment>> ResolvedBackup::Segments(size_t rep,
                                                        std::span<const FlatExtent> extents) const {
  std::vector<Segment> segments;
  segments.reserve(extents.size());
  for (const FlatExtent& x : extents) {
    ASSIGN_OR_RETURN(auto file, OpenDataFile(rep, x));
    RETURN_IF_ERROR(file->CheckDeclaredSize(x.length));
    segments.push_back({std::move(file), 0, x.length});
  }
  return segments;
}

StatusOr<std::shared_ptr<const RandomAccessFile>> ResolvedBackup::Stitch(
    size_t rep, std::span<const FlatExtent> extents) const {
  ASSIGN_OR_RETURN(std::vector<Segment> segments, Segments(rep, extents));
  return Concatenate(std::move(segments));
}

StatusOr<std::vector<Segment>> ResolvedBackup::OpenSegments(size_t entry) const {
  auto r = Segments(Rep(entry), Extents(entry));
  if (r.ok()) return r;
  return AboutEntry(entry, r.status());
}

std::vector<ContentKey> ResolvedBackup::Prefixes(size_t entry) const {
  const FileEntry e = top_->manifest().entry(entry);
  std::vector<ContentKey> out;
  if (e.size == 0) return out;
  out.push_back({e.size, e.checksum});
  const size_t r = Rep(entry);
  if (r + 1 < t_.first_prefix.size()) {
    out.insert(out.end(), t_.prefix_keys.begin() + t_.first_prefix[r],
               t_.prefix_keys.begin() + t_.first_prefix[r + 1]);
  }
  return out;
}

Status ResolvedBackup::AboutEntry(size_t entry, const Status& s) const {
  return s.WithPrefix(top_->Prefix() + "entry \"" +
                      std::string(top_->manifest().entry(entry).name) + "\": ");
}

StatusOr<std::shared_ptr<const RandomAccessFile>> ResolvedBackup::OpenEntry(size_t entry) const {
  auto r = Stitch(Rep(entry), Extents(entry));
  if (r.ok()) return r;
  return AboutEntry(entry, r.status());
}

StatusOr<std::shared_ptr<const RandomAccessFile>> ResolvedBackup::OpenStoredTail(
    size_t entry) const {
  std::vector<FlatExtent> x = Extents(entry);
  if (!x.empty() && x.back().level == 0) {
    x.erase(x.begin(), x.end() - 1);
  } else {
    x.clear();
  }
  auto r = Stitch(Rep(entry), x);
  if (r.ok()) return r;
  return AboutEntry(entry, r.status());
}

BackupStats ResolvedBackup::Stats() const {
  BackupStats st = ManifestStats(*top_, depth());
  for (size_t i = 0; i < top_->manifest().num_entries(); ++i) {
    for (const FlatExtent& x : Extents(i)) st.bytes_by_level[x.level] += x.length;
  }
  return st;
}

size_t ResolvedBackup::MemoryUsage() const {
  return t_.extents.size_bytes() + t_.first_extent.size_bytes() + t_.files.size_bytes() +
         t_.names.size() + t_.origins.size_bytes();
}

}  // namespace stitchfs::engine
