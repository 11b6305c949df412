// Temporary files left in the caches by processes that died (a decode killed midway): removed
// at the next start and counted against the caps; a live process's temporary file never.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "engine/backends/archive/archive_cache.h"
#include "engine/backends/s3/block_cache.h"
#include "engine/base/atomic_file.h"
#include "engine/base/cache_dir.h"
#include "engine/base/temp_name.h"
#include "engine/format/manifest_cache.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

using testutil::ReadFile;
using testutil::TempDir;
using testutil::WriteFile;

// The TempSuffix() of a child process that has exited (and been reaped) since.
std::string DeadSuffix() {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string s = TempSuffix();
    ssize_t n = ::write(fds[1], s.data(), s.size());
    ::_exit(n == static_cast<ssize_t>(s.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  char buf[256];
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

void SetAge(const std::string& path, int64_t seconds) {
  struct timespec t[2];
  t[0].tv_sec = t[1].tv_sec = ::time(nullptr) - seconds;
  t[0].tv_nsec = t[1].tv_nsec = 0;
  ::utimensat(AT_FDCWD, path.c_str(), t, 0);
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

TEST(TempNameTest, TellsLiveDeadAndUnknownWriters) {
  EXPECT_EQ(OwnerOfTemp("abc.manifest"), TempOwner::kNotTemp);
  EXPECT_EQ(OwnerOfTemp("abc.manifest" + TempSuffix()), TempOwner::kAlive);
  const std::string dead = DeadSuffix();
  ASSERT_FALSE(dead.empty());
  EXPECT_EQ(OwnerOfTemp("abc.stream" + dead), TempOwner::kDead);
  // This process's pid with another start time: the pid was reused, the writer is gone.
  std::string reused = TempSuffix();
  const size_t start = reused.find('-', 5) + 1;
  reused.replace(start, reused.find('-', start) - start, "1");
  EXPECT_EQ(OwnerOfTemp("x" + reused), TempOwner::kDead) << reused;
  // Another boot or pid namespace, or the names older versions wrote: not judged.
  std::string other = TempSuffix();
  other.replace(other.rfind('-') - 16, 16, "0123456789abcdef");
  EXPECT_EQ(OwnerOfTemp("x" + other), TempOwner::kUnknown);
  EXPECT_EQ(OwnerOfTemp("x.stream.tmp-" + std::to_string(::getpid()) + "-3"), TempOwner::kUnknown);
  EXPECT_EQ(OwnerOfTemp("ab/cdef.tmp12345-140737"), TempOwner::kUnknown);
}

TEST(TrimCacheFolderTest, RemovesDeadWritersLeftoversAndCountsLiveOnes) {
  TempDir dir;
  const std::string dead = dir / ("a.stream" + DeadSuffix());
  const std::string live = dir / ("b.stream" + TempSuffix());
  const std::string legacy_new = dir / "c.stream.tmp-999999-1";
  const std::string legacy_old = dir / "d.stream.tmp-999999-2";
  const std::string oldest = dir / "e.aindex", newest = dir / "f.aindex";
  WriteFile(dead, std::string(4000, 'd'));
  WriteFile(live, std::string(500, 'l'));
  WriteFile(legacy_new, "x");
  WriteFile(legacy_old, "x");
  WriteFile(oldest, std::string(600, 'o'));
  WriteFile(newest, std::string(300, 'n'));
  SetAge(live, 7200);  // Old, but its writer runs: never removed.
  SetAge(legacy_old, 2 * kUnjudgedTempSec);
  SetAge(oldest, 100);
  TrimCacheFolder(dir.path(), {".aindex", ".stream"}, 1000);
  EXPECT_FALSE(Exists(dead)) << "a dead writer's leftover goes, however new";
  EXPECT_TRUE(Exists(live)) << "a live writer's temporary file stays, however old";
  EXPECT_TRUE(Exists(legacy_new)) << "a writer that cannot be judged gets a day";
  EXPECT_FALSE(Exists(legacy_old));
  // 500 being written + 600 + 300 > 1000: the oldest cache file makes room.
  EXPECT_FALSE(Exists(oldest)) << "the live temporary file counts against the cap";
  EXPECT_TRUE(Exists(newest));
}

TEST(TrimCacheFolderTest, ArchiveAndManifestCachesTrimLeftovers) {
  TempDir dir;
  const std::string stream = dir / ("0123.stream" + DeadSuffix());
  const std::string index = dir / ("4567.index" + DeadSuffix());
  WriteFile(stream, std::string(100, 's'));
  WriteFile(index, std::string(100, 'i'));
  ArchiveCache(dir.path(), 1 << 20).Trim();
  EXPECT_FALSE(Exists(stream));
  ManifestCache(dir.path(), 1 << 20).Trim();
  EXPECT_FALSE(Exists(index));
}

TEST(BlockCacheLeftoversTest, OpenRemovesDeadWritersTempsAndCountsLiveOnes) {
  TempDir dir;
  const std::string dead = dir / ("ab/cdef" + DeadSuffix());
  const std::string live = dir / ("cd/0123" + TempSuffix());
  WriteFile(dead, std::string(3000, 'd'));
  WriteFile(live, std::string(3000, 'l'));
  {
    auto cache = BlockCache::Open(dir.path(), 1 << 20);
    ASSERT_TRUE(cache);
    cache->Put("obj", 0, std::string(2000, 'a'));
  }
  EXPECT_FALSE(Exists(dead));
  EXPECT_TRUE(Exists(live)) << "another process is writing it";
  // Capacity for one block plus the live temporary file, not for two blocks beside it.
  auto cache = BlockCache::Open(dir.path(), 3000 + 2 * 2200);
  ASSERT_TRUE(cache);
  cache->Put("obj", 1, std::string(2000, 'b'));
  cache->Put("obj", 2, std::string(2000, 'c'));
  std::string got(2000, '\0');
  EXPECT_FALSE(cache->Get("obj", 0, {got.data(), got.size()})) << "evicted to make room";
  EXPECT_TRUE(cache->Get("obj", 2, {got.data(), got.size()}));
  EXPECT_TRUE(Exists(live));
}

TEST(AtomicFileLeftoversTest, WritingRemovesDeadWritersTemps) {
  TempDir dir;
  const std::string dead = dir / (".index" + DeadSuffix());
  const std::string live = dir / (".index" + TempSuffix());
  const std::string other = dir / (".backup" + DeadSuffix());
  WriteFile(dead, "partial");
  WriteFile(live, "being written");
  WriteFile(other, "another name's");
  ASSERT_TRUE(WriteFileAtomically(dir.path(), "index", "whole").ok());
  EXPECT_EQ(ReadFile(dir / "index"), "whole");
  EXPECT_FALSE(Exists(dead));
  EXPECT_TRUE(Exists(live));
  EXPECT_TRUE(Exists(other)) << "only the temporary files of the name written";
}

}  // namespace
}  // namespace stitchfs::engine
