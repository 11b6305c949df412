#include "engine/backends/s3/s3_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace stitchfs::engine {
namespace {

// A lock as S3LockText writes it, but for process `pid` and pid namespace `pidns`.
std::string LockOf(pid_t pid, const std::string& pidns) {
  std::string mine = S3LockText(WriterIntent{"u", "", ""});
  const size_t at = mine.find("\npid ");
  const size_t start = mine.find("\nstart ");
  return mine.substr(0, at) + "\npid " + std::to_string(pid) +
         mine.substr(start, mine.find("\npidns ") - start) + "\npidns " + pidns + "\n";
}

pid_t ExitedChild() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::string OurPidNamespace() {
  const std::string text = S3LockText(WriterIntent{"u", "", ""});
  const size_t at = text.find("\npidns ") + 7;
  return text.substr(at, text.find('\n', at) - at);
}

TEST(S3LockTest, OnlyAWriterOfThisMachineAndPidNamespaceIsJudgedDead) {
  ASSERT_FALSE(OurPidNamespace().empty());
  const pid_t gone = ExitedChild();
  EXPECT_TRUE(S3LockWriterDied(LockOf(gone, OurPidNamespace())));
  EXPECT_FALSE(S3LockWriterDied(LockOf(::getpid(), OurPidNamespace())));  // Alive.
  EXPECT_FALSE(S3LockWriterDied(LockOf(gone, "pid:[1]")));  // Another container's pid.
  EXPECT_FALSE(S3LockWriterDied(LockOf(gone, "")));         // An older lock: cannot tell.
}

// A writer knows its lock by the whole text: the uuid alone is shared by a prune's rewrite of
// the backup (S3Writer compares the text it wrote).
TEST(S3LockTest, ALockTextNamesTheProcessNotJustTheBackup) {
  const std::string ours = S3LockText(WriterIntent{"abc", "", ""});
  EXPECT_EQ(ours, S3LockText(WriterIntent{"abc", "", ""}));
  const pid_t gone = ExitedChild();
  std::string other = ours;
  const size_t at = other.find("\npid ") + 5;
  other.replace(at, other.find('\n', at) - at, std::to_string(gone));
  EXPECT_NE(other, ours);
  EXPECT_EQ(ParseLockText(other).uuid, ParseLockText(ours).uuid);
}

TEST(S3LockTest, LockTextsNameTheBaseAndParseInEveryForm) {
  const WriterIntent w{"11111111-2222-4333-8444-555555555555",
                       "66666666-7777-4888-8999-000000000000", "/st/d6\nodd"};
  const LockFields f = ParseLockText(S3LockText(w));
  EXPECT_EQ(f.uuid, w.uuid);
  EXPECT_EQ(f.base_uuid, w.base_uuid);
  EXPECT_EQ(f.base_location, "/st/d6 odd") << "one line";
  EXPECT_FALSE(f.other.at("pid").empty());
  EXPECT_EQ(ParseLockText(LockText({w.uuid, "", ""})).base_uuid, "");
  // ClickHouse's: the bare uuid, no newline; stitch's S3 locks before the base was recorded.
  EXPECT_EQ(ParseLockText(w.uuid).uuid, w.uuid);
  const LockFields old = ParseLockText("uuid " + w.uuid + "\nhost h\npid 7\n");
  EXPECT_EQ(old.uuid, w.uuid);
  EXPECT_EQ(old.other.at("pid"), "7");
  EXPECT_TRUE(ParseLockText("").uuid.empty());
}

TEST(S3LockTest, BackupsNestedUnderAPrefixAreFound) {
  std::vector<S3Object> keys;
  for (const char* k : {"p/.lock", "p/data/a.bin", "p/inner/.backup", "p/inner/data/x",
                        "p/deep/er/.lock", "p/deep/er/y", "p/deep/z", "q/.backup"}) {
    keys.push_back({k, 0, ""});
  }
  const auto roots = NestedBackups(keys, "p/");
  EXPECT_EQ(roots, (std::set<std::string>{"p/inner/", "p/deep/er/"}));
  EXPECT_TRUE(InNestedBackup("p/inner/data/x", roots));
  EXPECT_TRUE(InNestedBackup("p/deep/er/y", roots));
  EXPECT_FALSE(InNestedBackup("p/deep/z", roots));
  EXPECT_FALSE(InNestedBackup("p/data/a.bin", roots));
  EXPECT_TRUE(NestedBackups(keys, "").count("p/"));  // At a bucket's root: every backup.
}

// The objects a removal deletes apart from the data, never in one batch with it.
TEST(S3LockTest, GuardsAreWhatSaysWhatAPrefixHolds) {
  for (const char* k : {"p/.backup", "p/.lock", "p/.lock.12", "p/.stitch-deleting"}) {
    EXPECT_TRUE(IsGuardObject(k, "p/")) << k;
  }
  EXPECT_TRUE(IsGuardObject(".lock.3", ""));  // A backup at a bucket's root.
  for (const char* k : {"p/data.bin", "p/.lock.012", "p/.lockx", "p/.lock.", "p/in/.backup",
                        "p/.stitchfs/data/.lock", "q/.backup", "p/"}) {
    EXPECT_FALSE(IsGuardObject(k, "p/")) << k;
  }
}

}  // namespace
}  // namespace stitchfs::engine
