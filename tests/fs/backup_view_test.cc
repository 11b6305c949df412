#include "fs/backup_view.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "engine/format/manifest_reader.h"
#include "engine/read/chain_walk.h"
#include "engine/read/open_resolved.h"
#include "engine/write/snapshot_writer.h"
#include "tests/fs/view_fixture.h"
#include "tests/testutil/context.h"

namespace stitchfs::fs::fstest {
namespace {

using engine::ErrorCode;
constexpr uint64_t kRoot = InodeTable::kRoot;

int64_t EpochOf(const char* civil) {
  return engine::CivilToEpochSeconds(*engine::ParseCivil(civil));
}

TEST_F(ViewTest, AttributesOfABackupWithoutMetadata) {
  const struct stat root = Stat("");
  EXPECT_EQ(root.st_ino, kRoot);
  EXPECT_EQ(root.st_mode, static_cast<mode_t>(S_IFDIR | 0555));
  const struct stat log = Stat("log/app.log");
  EXPECT_EQ(log.st_mode, static_cast<mode_t>(S_IFREG | 0444));
  EXPECT_EQ(log.st_size, static_cast<off_t>(a_.size() + b_.size() + c_.size()));
  EXPECT_EQ(log.st_nlink, 1u);
  EXPECT_EQ(log.st_uid, 0u);
  EXPECT_EQ(log.st_mtim.tv_sec, EpochOf("2026-10-03 00:00:00")) << "changed in this backup";
  EXPECT_EQ(Stat("metadata/db.sql").st_mtim.tv_sec, EpochOf("2026-10-01 00:00:00"))
      << "unchanged since b0: b0's time";
  EXPECT_EQ(Stat("new/name.bin").st_mtim.tv_sec, EpochOf("2026-10-02 00:00:00"))
      << "renamed in b1: unchanged since b1 only";
  EXPECT_EQ(Stat("empty.txt").st_size, 0);
  EXPECT_TRUE(S_ISDIR(Stat("copy").st_mode));

  AttrOptions a = Attr();
  a.uid = 7;
  a.gid = 8;
  a.umask = 044;
  BackupView other(backup_, a);
  auto st = other.Attr(Ino("log/app.log"));
  ASSERT_OK(st.status());
  EXPECT_EQ(st->st_mode, static_cast<mode_t>(S_IFREG | 0400));
  EXPECT_EQ(st->st_uid, 7u);
  EXPECT_EQ(st->st_gid, 8u);

  for (uint64_t ino : {uint64_t{0}, 2 * view_->NumInodes() + 2, ~uint64_t{0}}) {
    EXPECT_EQ(view_->Attr(ino).status().code(), ErrorCode::kEntryNotFound) << ino;
  }
}

TEST_F(ViewTest, ATableBuiltAheadServesTheSameTreeAndAForeignOneIsBuiltAgain) {
  // The mount opens the top, builds its tree on another core while the chain resolves
  // (OpenResolved of the opened top), then hands the tree over.
  engine::ChainOptions chain = testutil::LocalChain();
  auto top = engine::OpenBackup(backup_->top().path(), chain);
  ASSERT_OK(top.status());
  InodeTable ahead = InodeTable::Build((*top)->manifest());
  auto resolved = engine::OpenResolved(*top, chain);
  ASSERT_OK(resolved.status());
  EXPECT_EQ(&(*resolved)->top(), top->get()) << "the opened top is the resolved one's";
  BackupView view(*resolved, std::move(ahead), Attr());
  // One built from another manifest (the fixture's own open) is not used: rebuilt.
  BackupView foreign(*resolved, InodeTable::Build(backup_->top().manifest()), Attr());
  for (const BackupView* v : {&view, &foreign}) {
    EXPECT_TRUE(v->table().IsOf((*resolved)->top().manifest()));
    EXPECT_EQ(v->NumInodes(), view_->NumInodes());
    for (const char* path : {"log/app.log", "copy/b.bin", "new/name.bin", "empty.txt"}) {
      auto ino = Walk(*v, path);
      ASSERT_OK(ino.status());
      EXPECT_EQ(*ino, Ino(path)) << path;
      auto st = v->Attr(*ino);
      ASSERT_OK(st.status());
      EXPECT_EQ(st->st_size, Stat(path).st_size) << path;
    }
  }
}

TEST_F(ViewTest, TheFlatManifestIsFoundByNameButNotListed) {
  auto ino = view_->Lookup(kRoot, BackupView::kManifestFile);
  ASSERT_OK(ino.status());
  auto st = view_->Attr(*ino);
  ASSERT_OK(st.status());
  EXPECT_EQ(st->st_mode, static_cast<mode_t>(S_IFREG | 0444));
  auto file = view_->Open(*ino);
  ASSERT_OK(file.status());
  EXPECT_EQ((*file)->size(), static_cast<uint64_t>(st->st_size));
  std::string text((*file)->size(), '\0');
  ASSERT_OK((*file)->ReadAt(0, text).status());
  // One full backup: the same uuid, no base, every file under its own name.
  auto m = engine::ParseManifest(text, "flat");
  ASSERT_OK(m.status());
  EXPECT_EQ((*m)->header().uuid, uuids_[0]);
  EXPECT_TRUE((*m)->header().base_backup.empty());
  EXPECT_EQ((*m)->num_entries(), backup_->top().manifest().num_entries());
  for (size_t i = 0; i < (*m)->num_entries(); ++i) {
    const engine::FileEntry e = (*m)->entry(i);
    EXPECT_EQ(e.base_size, 0u);
    if (e.size > 0) {
      EXPECT_EQ(e.data_file, e.name);
    }
    auto orig = backup_->top().manifest().FindByName(e.name);
    ASSERT_TRUE(orig.has_value()) << e.name;
    EXPECT_EQ(backup_->top().manifest().entry(*orig).checksum, e.checksum);
  }
  auto listing = view_->ReadDir(kRoot, 0, 100);
  ASSERT_OK(listing.status());
  for (const DirEntry& d : *listing) EXPECT_NE(d.name, BackupView::kManifestFile);
  EXPECT_EQ(view_->Lookup(Ino("log"), BackupView::kManifestFile).status().code(),
            ErrorCode::kEntryNotFound)
      << "only at the root";
  AttrOptions off = Attr();
  off.backup_manifest = false;
  BackupView without(backup_, off);
  EXPECT_EQ(without.Lookup(kRoot, BackupView::kManifestFile).status().code(),
            ErrorCode::kEntryNotFound);
  EXPECT_EQ(without.Attr(*ino).status().code(), ErrorCode::kEntryNotFound);
}

TEST_F(ViewTest, LookupsAndListings) {
  EXPECT_EQ(view_->Lookup(kRoot, "nothing").status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(view_->Lookup(Ino("log"), "APP.LOG").status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(view_->Lookup(Ino("empty.txt"), "x").status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(view_->Lookup(kRoot, "").status().code(), ErrorCode::kEntryNotFound);

  auto root = List(*view_, kRoot);
  ASSERT_OK(root.status());
  EXPECT_EQ(Names(*root),
            (std::vector<std::string>{".", "..", "copy", "empty.txt", "log", "metadata", "new"}));
  EXPECT_EQ((*root)[0].ino, kRoot);
  EXPECT_EQ((*root)[1].ino, kRoot) << "a single mount's root is its own parent";
  for (size_t i = 2; i < root->size(); ++i) {
    EXPECT_EQ(Ino((*root)[i].name), (*root)[i].ino) << "listing and lookup agree";
  }
  auto log = List(*view_, Ino("log"));
  ASSERT_OK(log.status());
  EXPECT_EQ(Names(*log), (std::vector<std::string>{".", "..", "app.log"}));
  EXPECT_EQ((*log)[1].ino, kRoot);

  auto tail = view_->ReadDir(kRoot, 5, 10);
  ASSERT_OK(tail.status());
  EXPECT_EQ(Names(*tail), (std::vector<std::string>{"metadata", "new"}));
  EXPECT_TRUE(view_->ReadDir(kRoot, 7, 10)->empty()) << "past the end";
  EXPECT_TRUE(view_->ReadDir(kRoot, 1000, 10)->empty());
  EXPECT_EQ(view_->ReadDir(kRoot, 0, 2)->size(), 2u);
  EXPECT_TRUE(view_->ReadDir(kRoot, 0, 0)->empty());
  EXPECT_EQ(view_->ReadDir(Ino("empty.txt"), 0, 10).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(view_->ReadDir(0, 0, 10).status().code(), ErrorCode::kEntryNotFound);

  BackupView in_store(backup_, Attr(), 0);
  EXPECT_EQ(in_store.ReadDir(kRoot, 1, 1)->at(0).ino, 0u) << "'..' of the root as given";
  EXPECT_EQ(view_->Timeout(kRoot), BackupView::kForever);
}

TEST_F(ViewTest, FilesReadAcrossTheChain) {
  EXPECT_EQ(ReadAll(*view_, Ino("log/app.log")).value(), a_ + b_ + c_);
  EXPECT_EQ(ReadAll(*view_, Ino("log/app.log"), 7).value(), a_ + b_ + c_);
  EXPECT_EQ(ReadAll(*view_, Ino("metadata/db.sql")).value(), kSql);
  EXPECT_EQ(ReadAll(*view_, Ino("new/name.bin")).value(), "renamed content");
  EXPECT_EQ(ReadAll(*view_, Ino("copy/b.bin")).value(), "same bytes twice");
  EXPECT_EQ(ReadAll(*view_, Ino("empty.txt")).value(), "");
  EXPECT_EQ(view_->Open(Ino("log")).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(view_->Open(0).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(view_->Readlink(Ino("empty.txt")).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(view_->Readlink(0).status().code(), ErrorCode::kEntryNotFound);
  uint64_t total = 0;
  for (const char* f : {"log/app.log", "metadata/db.sql", "new/name.bin", "copy/a.bin",
                        "copy/b.bin", "empty.txt"}) {
    total += Stat(f).st_size;
  }
  EXPECT_EQ(view_->TotalBytes(), total);
}

TEST_F(ViewTest, TheHiddenAppendedMirrorHoldsWhatThisBackupStored) {
  const uint64_t mirror = Ino(BackupView::kAppendedDir);
  EXPECT_GT(mirror, view_->table().size());
  EXPECT_TRUE(S_ISDIR(view_->Attr(mirror)->st_mode));
  auto listed = List(*view_, kRoot);
  for (const DirEntry& e : *listed) EXPECT_NE(e.name, BackupView::kAppendedDir) << "never listed";

  auto inside = List(*view_, mirror);
  ASSERT_OK(inside.status());
  EXPECT_EQ(Names(*inside), Names(*listed)) << "the same tree";
  EXPECT_EQ((*inside)[0].ino, mirror);
  EXPECT_EQ((*inside)[1].ino, kRoot) << "its parent is the real root";
  for (size_t i = 2; i < inside->size(); ++i) {
    EXPECT_NE((*inside)[i].ino, (*listed)[i].ino);
    EXPECT_EQ(Walk(*view_, (*inside)[i].name, mirror).value(), (*inside)[i].ino);
  }
  auto log_dir = List(*view_, Walk(*view_, "log", mirror).value());
  EXPECT_EQ((*log_dir)[1].ino, mirror) << "'..' stays in the mirror";

  const std::vector<std::pair<std::string, std::string>> stored = {
      {"log/app.log", c_},                 // Appended: only the new tail.
      {"metadata/db.sql", ""},             // Unchanged since the base: nothing.
      {"new/name.bin", ""},                // Renamed: nothing.
      {"copy/a.bin", "same bytes twice"},  // New: all of it.
      {"empty.txt", ""},
  };
  for (const auto& [path, want] : stored) {
    const uint64_t ino = Walk(*view_, path, mirror).value();
    EXPECT_EQ(view_->Attr(ino)->st_size, static_cast<off_t>(want.size())) << path;
    EXPECT_EQ(view_->Attr(ino)->st_ino, ino) << path;
    EXPECT_EQ(ReadAll(*view_, ino).value(), want) << path;
    EXPECT_TRUE(view_->XattrNames(ino)->empty()) << path;
    EXPECT_EQ(view_->Xattr(ino, "user.stitchfs.source").status().code(), ErrorCode::kEntryNotFound);
  }
  const uint64_t dup = Walk(*view_, "copy/b.bin", mirror).value();
  EXPECT_EQ(ReadAll(*view_, dup)->size(), static_cast<size_t>(view_->Attr(dup)->st_size));
  EXPECT_EQ(view_->Lookup(mirror, BackupView::kAppendedDir).status().code(),
            ErrorCode::kEntryNotFound);
  EXPECT_EQ(view_->Lookup(Ino("log"), BackupView::kAppendedDir).status().code(),
            ErrorCode::kEntryNotFound);
}

// A mirror file that is the whole file (stored whole here) is checked as the file is; a tail
// alone has no checksum to be checked against.
TEST_F(ViewTest, AMirrorOfAFileStoredWholeIsCheckedATailIsNot) {
  const uint64_t mirror = Ino(BackupView::kAppendedDir);
  auto whole = view_->Reads(Walk(*view_, "copy/a.bin", mirror).value());
  ASSERT_OK(whole.status());
  std::shared_ptr<SequentialCheck> check = (*whole)->CheckFor(0);
  ASSERT_NE(check, nullptr);
  std::string wrong = "same bytes twice";
  wrong[3] ^= 1;
  check->Begin(0, wrong.size());
  EXPECT_EQ(check->Accept(0, wrong).code(), ErrorCode::kBackupDamaged);
  auto right = view_->Reads(Walk(*view_, "copy/a.bin", mirror).value());
  std::shared_ptr<SequentialCheck> again = (*right)->CheckFor(0);
  again->Begin(0, 16);
  EXPECT_EQ(again->Accept(0, "same bytes twice").code(), ErrorCode::kBackupDamaged)
      << "the verdict found stays (the kernel may read again from the start)";
  auto tail = view_->Reads(Walk(*view_, "log/app.log", mirror).value());
  ASSERT_OK(tail.status());
  EXPECT_EQ((*tail)->CheckFor(0), nullptr);
}

// A backup written by stitch backup: modes, owners, nanosecond times, symlinks, hard links and
// empty folders as the source had them.
TEST(BackupViewTest, MetadataOfAStitchfsBackup) {
  testutil::TempDir dir;
  const std::string src = dir / "src";
  testutil::WriteFile(src + "/d/f", "hello");
  ASSERT_EQ(::chmod((src + "/d/f").c_str(), 0640), 0);
  ASSERT_EQ(::chown((src + "/d/f").c_str(), 1234, 5678), 0);
  const struct timespec times[2] = {{1, 0}, {1600000000, 123456789}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (src + "/d/f").c_str(), times, 0), 0);
  ASSERT_EQ(::link((src + "/d/f").c_str(), (src + "/d/h").c_str()), 0);
  ASSERT_EQ(::symlink("d/f", (src + "/link").c_str()), 0);
  std::filesystem::create_directories(src + "/e");
  ASSERT_EQ(::chmod((src + "/d").c_str(), 0750), 0);
  engine::BackupOptions o;
  o.chain = testutil::LocalChain();
  o.source = src;
  o.dest = dir / "b";
  ASSERT_OK(engine::WriteBackup(o, nullptr).status());
  auto backup = engine::OpenResolved(o.dest, testutil::LocalChain());
  ASSERT_OK(backup.status());
  BackupView view(*backup, {});

  const uint64_t f = Walk(view, "d/f").value();
  const struct stat st = view.Attr(f).value();
  EXPECT_EQ(st.st_mode, static_cast<mode_t>(S_IFREG | 0640));
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 5678u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1600000000);
  EXPECT_EQ(st.st_mtim.tv_nsec, 123456789);
  EXPECT_EQ(st.st_nlink, 2u);
  EXPECT_EQ(Walk(view, "d/h").value(), f) << "hard links share an inode";
  EXPECT_EQ(view.Attr(Walk(view, "d").value())->st_mode, static_cast<mode_t>(S_IFDIR | 0750));

  const uint64_t link = Walk(view, "link").value();
  EXPECT_EQ(view.Readlink(link).value(), "d/f");
  EXPECT_EQ(view.Attr(link)->st_mode & S_IFMT, static_cast<mode_t>(S_IFLNK));
  EXPECT_EQ(view.Attr(link)->st_size, 3);
  EXPECT_EQ(view.Open(link).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_TRUE(view.XattrNames(link)->empty());
  EXPECT_EQ(NamesIn(view, Walk(view, "e").value()), (std::vector<std::string>{".", ".."}));
  EXPECT_EQ(NamesIn(view, kRoot), (std::vector<std::string>{".", "..", "d", "e", "link"}));
  EXPECT_EQ(ReadAll(view, Walk(view, "d/h").value()).value(), "hello");
}

}  // namespace
}  // namespace stitchfs::fs::fstest
