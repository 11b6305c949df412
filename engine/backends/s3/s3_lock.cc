#include "engine/backends/s3/s3_lock.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "engine/backends/s3/bucket_objects.h"
#include "engine/storage/generation_lock.h"

namespace stitchfs::engine {
namespace {

std::string FirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/PID/stat: when the process started (tells a reused pid apart).
std::string StartTime(long pid) {
  const std::string line = FirstLine(("/proc/" + std::to_string(pid) + "/stat").c_str());
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos) return "";
  std::istringstream in(line.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && in >> field; ++i) {
  }
  return field;
}

// This process's pid namespace ("pid:[INODE]"): a pid means nothing in another one.
std::string PidNamespace() {
  char buf[64] = {0};
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

// The `.lock` a writer here puts: who it is, so that a later writer on this machine can tell
// whether it died.
std::string S3LockText(const WriterIntent& w) {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  const long pid = static_cast<long>(::getpid());
  return LockText(w, std::string("host ") + host + "\nboot " +
                         FirstLine("/proc/sys/kernel/random/boot_id") + "\npid " +
                         std::to_string(pid) + "\nstart " + StartTime(pid) + "\npidns " +
                         PidNamespace() + "\n");
}

// True if `lock` was written by a process of this machine's current boot that is gone.
bool S3LockWriterDied(const std::string& lock) {
  std::map<std::string, std::string> f = ParseLockText(lock).other;
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  // Another machine, boot or pid namespace (a container sharing the host name), or a lock
  // without them: its writer cannot be judged from here.
  if (f["host"] != host || f["boot"].empty() ||
      f["boot"] != FirstLine("/proc/sys/kernel/random/boot_id") || f["pid"].empty() ||
      f["pidns"].empty() || f["pidns"] != PidNamespace()) {
    return false;
  }
  const long pid = std::strtol(f["pid"].c_str(), nullptr, 10);
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  const std::string start = StartTime(pid);
  return !start.empty() && start != f["start"];  // The pid lives on in another process.
}

StatusOr<std::optional<int>> TakeS3Lock(const S3Bucket& bucket, const std::string& lock_key,
                                        const std::string& text) {
  const BucketObjects objects(bucket);
  ASSIGN_OR_RETURN(auto lock, CurrentLock(objects, lock_key));
  if (lock && !S3LockWriterDied(lock->text)) return std::optional<int>();
  const int generation = lock ? lock->generation + 1 : 0;
  ASSIGN_OR_RETURN(bool taken, CreateLockGeneration(objects, lock_key, generation, text,
                                                    lock ? lock->text : std::string()));
  return taken ? std::optional<int>(generation) : std::optional<int>();
}

std::set<std::string> NestedBackups(const std::vector<S3Object>& objects,
                                    const std::string& prefix) {
  std::set<std::string> roots;
  for (const S3Object& o : objects) {
    const std::string& key = o.key;
    if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t slash = key.rfind('/');
    if (slash == std::string::npos || slash < prefix.size()) continue;  // At the prefix itself.
    const std::string_view name = std::string_view(key).substr(slash + 1);
    if (name == ".backup" || name == ".lock") roots.insert(key.substr(0, slash + 1));
  }
  return roots;
}

bool IsGuardObject(const std::string& key, const std::string& prefix) {
  if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string_view name = std::string_view(key).substr(prefix.size());
  return name == ".backup" || name == kS3DeletingMarker ||
         LockGenerationOf(key, prefix + ".lock") >= 0;
}

namespace {

// The guards of a prefix, one DELETE each: the `.lock` generations oldest first (as a holder
// releases them), the marker last (a prefix holding only it is still a backup being removed).
Status DeleteGuards(const S3Bucket& bucket, const std::string& prefix,
                    std::vector<std::string> guards) {
  const auto rank = [&](const std::string& key) {
    const int g = LockGenerationOf(key, prefix + ".lock");
    return g >= 0 ? g : std::numeric_limits<int>::max();
  };
  std::sort(guards.begin(), guards.end(),
            [&](const std::string& x, const std::string& y) { return rank(x) < rank(y); });
  for (const std::string& key : guards) RETURN_IF_ERROR(bucket.Delete(key));
  return Status::OK();
}

}  // namespace

Status RemoveBackupObjects(const S3Bucket& bucket, const std::string& prefix,
                           const std::function<bool(const std::string& key)>& spare) {
  ASSIGN_OR_RETURN(S3Listing all, bucket.List(prefix, ""));
  const auto nested = NestedBackups(all.objects, prefix);
  std::vector<std::string> data, guards;
  for (const S3Object& o : all.objects) {
    if (spare(o.key) || InNestedBackup(o.key, nested)) continue;
    if (o.key == prefix + ".backup") {
      return Status::BackupAlreadyExists("Backup " + EscapeForMessage(prefix) +
                                         " holds a .backup: its objects are not removed");
    }
    (IsGuardObject(o.key, prefix) ? guards : data).push_back(o.key);
  }
  ASSIGN_OR_RETURN(auto uploads, bucket.ListMultipart(prefix));
  for (const S3Upload& u : uploads) {
    if (!InNestedBackup(u.key, nested)) RETURN_IF_ERROR(bucket.AbortMultipart(u));
  }
  RETURN_IF_ERROR(bucket.DeleteMany(data));
  return DeleteGuards(bucket, prefix, std::move(guards));
}

bool InNestedBackup(const std::string& key, const std::set<std::string>& roots) {
  for (const std::string& r : roots) {
    if (key.compare(0, r.size(), r) == 0) return true;
  }
  return false;
}

}  // namespace stitchfs::engine
