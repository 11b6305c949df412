// ListingPolicy: whether folder listings (READDIRPLUS) carry the attributes of files.
//
// A listing that carries a file's attributes makes the kernel build an inode for it, which is
// most of the cost of a walk by name (find, ls, shell globs): so listings start lean, with only
// the names, inode numbers and types of files (folders always carry theirs, so a walk needs no
// LOOKUP to descend). The first LOOKUP of a file (not a folder or symlink) is the sign that
// something stats files (ls -l, du, tar, cp -a, rsync): from then on, for the rest of the mount,
// listings carry every attribute, and the folders listed lean so far are invalidated in the kernel
// (in the background), so that their next listing brings the attributes too instead of one LOOKUP
// per file.
//
// Thread-safe. Start() and Stop() bracket the serving loop.
#ifndef STITCHFS_FS_LISTING_POLICY_H_
#define STITCHFS_FS_LISTING_POLICY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace stitchfs::fs {

class ListingPolicy {
 public:
  ListingPolicy() = default;
  ListingPolicy(const ListingPolicy&) = delete;
  ListingPolicy& operator=(const ListingPolicy&) = delete;
  ~ListingPolicy() { Stop(); }

  // Drops the kernel's cached listing and attributes of one folder.
  using Invalidator = std::function<void(uint64_t dir)>;

  // From now on, switching calls `invalidate` for the folders listed lean (until Start, or with
  // an empty function, none are).
  void Start(Invalidator invalidate);
  // Abandons the invalidations under way (the session is ending); none are sent after it returns.
  void Stop();
  // Waits until the invalidations under way are done.
  void Wait();

  // True once listings carry the attributes of files.
  bool FileAttrs() const { return file_attrs_.load(std::memory_order_relaxed); }
  // Records that folder `dir` was listed without them (call for its first chunk).
  void ListedLean(uint64_t dir);
  // A file was looked up: listings carry attributes from now on.
  void FileLookedUp();

 private:
  void SwitchLocked();  // Turns attributes on and invalidates the lean folders. Holds mu_.
  void Invalidate(const Invalidator& invalidate, const std::vector<uint64_t>& dirs);

  // At this many lean folders (2 MiB of record), listings carry attributes from then on.
  static constexpr size_t kMaxLean = size_t{1} << 18;

  std::atomic<bool> file_attrs_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  Invalidator invalidate_;      // Guarded by mu_.
  std::vector<uint64_t> lean_;  // Guarded by mu_.
  std::thread invalidator_;     // Guarded by mu_.
};

}  // namespace stitchfs::fs

#endif  // STITCHFS_FS_LISTING_POLICY_H_
