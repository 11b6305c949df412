// StoreMoves: the steps by which prune changes a store, the only part of pruning that differs
// between storages; each storage hands out its own (Storage::MovesFor), so that prune never
// guesses from a location's spelling. A backup to remove is marked first (a marker file beside
// it, or a marker object beside its data) and taken out only once prune has proved nothing
// needs it: locally by a rename, in object storage by deleting its `.backup`. Locally a
// flattened copy is swapped in with one RENAME_EXCHANGE; in object storage, where nothing
// renames, a backup is flattened in place: new data objects under names of their own, then one
// PUT of the new `.backup`, then the old objects go. Either way every kept backup opens at
// every moment. What is written into a replacement comes from above (FlattenInPlace,
// engine/write/flatten.h): this layer only provides the atomic swap.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/base/status_or.h"
#include "engine/format/manifest.h"
#include "engine/storage/lock_text.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// The marker with which prune marks a backup of a folder store (local or MemStorage) that it
// removes (StoreMoves::SetAside): `.<name>.stitch-removing` beside the backup at `path`, a name
// no listing takes for a backup. Storage::BeingRemoved looks for it.
inline std::string RemovingMarker(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t at = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(0, at) + "." + path.substr(at) + ".stitch-removing";
}

// A backup being written in the store: where, and what its `.lock` says (its base's uuid).
struct StoreWriter {
  std::string path;
  LockFields lock;
};

// A copy being written to replace a backup of a store (StoreMoves::StartReplace): a
// BackupWriter whose Finish puts the copy in the backup's place in one atomic step (a reader
// opening the backup meanwhile gets the old or the new one). Without Finish the backup stays
// as it was. Not thread-safe, except as BackupWriter says.
class StoreReplacement : public BackupWriter {
 public:
  // What every data file name of the copy must start with: names the old version does not
  // use, where the copy is written beside it ("" where it is written elsewhere).
  virtual const std::string& data_prefix() const = 0;
  // After Finish returned OK: the bytes of the copy, measured as StoreMoves::BytesFreed does.
  virtual uint64_t bytes_written() const = 0;
};

// The usual StoreReplacement: the copy is written through `copy`, and `finish` completes it
// with the manifest, puts it in place and returns its bytes.
class CopyReplacement final : public StoreReplacement {
 public:
  using FinishFn = std::function<StatusOr<uint64_t>(BackupWriter& copy, std::string_view manifest)>;
  CopyReplacement(std::unique_ptr<BackupWriter> copy, std::string data_prefix, FinishFn finish)
      : copy_(std::move(copy)), prefix_(std::move(data_prefix)), finish_(std::move(finish)) {}

  StatusOr<std::unique_ptr<WritableFile>> CreateStaged(const std::string& id,
                                                       const std::string& name) override {
    return copy_->CreateStaged(id, name);
  }
  Status DropStaged(const std::string& id) override { return copy_->DropStaged(id); }
  Status Publish(const std::string& id, const std::string& name) override {
    return copy_->Publish(id, name);
  }
  StatusOr<std::unique_ptr<WritableFile>> CreateDataFile(const std::string& name) override {
    return copy_->CreateDataFile(name);
  }
  StatusOr<std::shared_ptr<const RandomAccessFile>> ReadBack(const std::string& name,
                                                             uint64_t size) override {
    return copy_->ReadBack(name, size);
  }
  Status Finish(std::string_view manifest) override {
    ASSIGN_OR_RETURN(bytes_, finish_(*copy_, manifest));
    return Status::OK();
  }
  const std::string& data_prefix() const override { return prefix_; }
  uint64_t bytes_written() const override { return bytes_; }

 private:
  std::unique_ptr<BackupWriter> copy_;
  const std::string prefix_;
  const FinishFn finish_;
  uint64_t bytes_ = 0;
};

// Not thread-safe.
class StoreMoves {
 public:
  virtual ~StoreMoves() = default;
  // Keeps any other prune of this store out until this object is gone (a second prune would
  // take the first one's work folders for leftovers). kIOError (EBUSY) if one is running.
  // Locally a flock on the store's folder; in object storage a lock object
  // (`.stitch-prune.lock`, taken like a backup's `.lock`: a dead prune's is taken over, one
  // of another machine is refused, naming it).
  virtual Status Lock() = 0;
  // The backups of the store being written by live writers (locally: a `.lock` whose flock is
  // held; in object storage: a `.lock` whose writer is not known to be dead), but the folders
  // named in `backups` (complete backups: no writer is at work there).
  virtual StatusOr<std::vector<StoreWriter>> Writers(const std::set<std::string>& backups) = 0;
  // Finishes what an interrupted prune left in the store: removes work folders and backups
  // taken out after the proof, and takes away marks of backups never taken out; a backup an
  // older version set aside (maybe unproven, maybe half deleted) is left as it is. Returns what
  // it left in place, and why (such a backup, saying how to put it back by hand; in object
  // storage also a backup whose `.lock` a live process holds, a writer that took it over or one
  // of another machine).
  virtual std::vector<std::string> RemoveLeftovers() = 0;
  // The bytes removing all the backups at `paths` frees, attributed to each (in order; the sum
  // is the total): locally what `du` counts (DiskUsage: blocks of files and folders, a file
  // linked from outside `paths` freeing nothing), in object storage the objects' lengths.
  virtual std::vector<uint64_t> BytesFreed(const std::vector<std::string>& paths) = 0;
  // A backup nested inside the backup at `path` (whose manifest is `m`): a folder below it
  // holding a `.backup` or `.lock` that is not one of `m`'s data files; nullopt if none. Prune
  // keeps such a backup rather than take the other along. (Object storage spares nested
  // backups when it removes one: nullopt.)
  virtual std::optional<std::string> NestedBackup(const std::string& path, const Manifest& m) = 0;
  // Starts replacing the backup at `path` by a copy with uuid `uuid`, written through the
  // replacement (whose Finish swaps it in; it must not outlive this object). kInternal for a
  // backup that is never rewritten (an archive: prune keeps its bases instead).
  virtual StatusOr<std::unique_ptr<StoreReplacement>> StartReplace(const std::string& path,
                                                                   const std::string& uuid) = 0;
  // Marks the backup at `path` for removal: it still opens, but from now on a writer refuses
  // to build on it (Storage::BeingRemoved); PutBack takes the mark away, Remove takes the
  // backup out of the store (it no longer opens) and deletes it. A prune that stops between
  // the two leaves a backup that opens, whose mark the next prune takes away
  // (RemoveLeftovers): only a backup proven unneeded is ever taken out.
  virtual Status SetAside(const std::string& path) = 0;
  virtual void PutBack(const std::string& path) = 0;
  virtual Status Remove(const std::string& path) = 0;
  // After a batch of SetAside calls: makes them durable.
  virtual Status Sync() = 0;
};

}  // namespace stitchfs::engine
