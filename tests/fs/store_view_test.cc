#include "fs/store_view.h"

#include <filesystem>
#include <map>

#include "engine/base/error_table.h"
#include "tests/fs/namespace_helpers.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::fs::fstest {
namespace {

// How often a store on this machine is read again (Storage::StoreRescanNs).
constexpr int64_t kLocalRescanNs = 1000000000;

namespace fs = std::filesystem;
using engine::ErrorCode;
constexpr uint64_t kRoot = StoreView::kRootIno;

// A store of two backups, g0 <- g1, a day apart, mounted as a StoreView under a clock the test
// moves.
class StoreViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log0_ = testutil::RandomBytes(3000, 1);
    log1_ = log0_ + testutil::RandomBytes(500, 2);
    uuid0_ = Put("g0", "2026-10-01 00:00:00", log0_);
    uuid1_ = Put("g1", "2026-10-02 00:00:00", log1_, "g0");
    Mount();
  }
  // Writes backup store/`name` (made aside, renamed into place), with `base` in the store.
  std::string Put(const std::string& name, const std::string& ts, const std::string& log,
                  const std::string& base = "", const std::string& uuid = "") {
    testutil::FixtureBackup b(store_ + "/.aside-" + name);
    b.header.timestamp = ts;
    if (!uuid.empty()) b.header.uuid = uuid;
    if (base.empty()) {
      b.AddStored("log/app.log", log);
      b.AddStored("db/t.sql", kSql);
    } else {
      testutil::FixtureBackup base_backup(store_ + "/" + base);
      base_backup.header.uuid = uuids_[base];
      b.SetBase(base_backup);
      b.AddStitched("log/app.log", log, log0_.size());
      b.AddFromBase("db/t.sql", kSql);
    }
    EXPECT_OK(b.Write());
    fs::remove_all(store_ + "/" + name);
    fs::rename(b.dir(), store_ + "/" + name);
    return uuids_[name] = b.uuid();
  }
  void Mount(StoreOptions o = {}) {
    if (!o.chain.storage) o.chain = testutil::LocalChain();
    o.clock = [this] { return now_; };
    view_ = std::make_unique<StoreView>(store_, o,
                                        [this](const std::string& l) { log_lines_.push_back(l); });
  }
  void Later() { now_ += kLocalRescanNs; }
  // Moves the clock on and looks at the root, which rescans the store.
  void Rescanned() {
    Later();
    ASSERT_OK(view_->Attr(kRoot).status());
  }
  uint64_t Ino(std::string_view path) const {
    auto ino = Walk(*view_, path);
    EXPECT_TRUE(ino.ok()) << path << ": " << ino.status().ToString();
    return ino.ok() ? *ino : 0;
  }
  std::string Target(std::string_view path) const {
    auto t = view_->Readlink(Ino(path));
    return t.ok() ? *t : t.status().ToString();
  }

  // The backup folder a store link leads to: links name it ("g1" from the root, "../g1" from
  // at/ and by-uuid/), checked by following the link.
  std::string LinkedName(std::string_view path) const {
    std::string t = Target(path);
    if (t.rfind("../", 0) == 0) t = t.substr(3);
    if (!Walk(*view_, t).ok()) return "a link that leads nowhere: " + t;
    return t;
  }
  // The hidden name of the present generation of folder `name`: ".generations/NAME@SLOT".
  std::string GenerationOf(const std::string& name) const {
    for (const std::string& g : NamesIn(*view_, Ino(".generations"))) {
      if (g.rfind(name + "@", 0) == 0) return ".generations/" + g;
    }
    return "no generation of " + name;
  }

  static constexpr const char* kSql = "CREATE TABLE t (x UInt8);\n";
  testutil::TempDir dir_;
  const std::string store_ = [this] {
    fs::create_directories(dir_ / "store");
    return dir_ / "store";
  }();
  std::string log0_, log1_, uuid0_, uuid1_;
  std::map<std::string, std::string> uuids_;  // Of each backup Put.
  int64_t now_ = int64_t{1700000000} * 1000000000;
  std::vector<std::string> log_lines_;
  std::unique_ptr<StoreView> view_;
};

TEST_F(StoreViewTest, TheRootListsEveryBackupAndTheNamesThatResolveThem) {
  EXPECT_EQ(NamesIn(*view_, kRoot),
            (std::vector<std::string>{".", "..", "g0", "g1", "at", "by-uuid", "latest"}));
  auto root = view_->Attr(kRoot);
  ASSERT_OK(root.status());
  EXPECT_EQ(root->st_mode, static_cast<mode_t>(S_IFDIR | 0555));
  EXPECT_EQ(root->st_mtim.tv_sec, now_ / 1000000000);
  EXPECT_EQ(view_->Timeout(kRoot), 1.0);
  EXPECT_EQ(LinkedName("latest"), "g1");
  EXPECT_EQ(view_->Attr(Ino("latest"))->st_mode, static_cast<mode_t>(S_IFLNK | 0777));
  EXPECT_EQ(Target("latest"), "g1");
  EXPECT_EQ(view_->Attr(Ino("latest"))->st_size, 2);
  EXPECT_EQ(Target("at/2026-10-01"), "../g0");
  // Through .generations the same backup, under other numbers (a folder has one parent).
  EXPECT_NE(Ino(".generations/g0@1"), Ino("g0"));
  EXPECT_NE(Ino(".generations/g0@1/log"), Ino("g0/log"));
  EXPECT_EQ(ReadAll(*view_, Ino(".generations/g0@1/log/app.log")).value(), log0_);
  EXPECT_EQ(List(*view_, Ino(".generations/g0@1"))->at(1).ino, Ino(".generations"));
  EXPECT_EQ(List(*view_, Ino("g0"))->at(1).ino, kRoot);
  EXPECT_EQ(NamesIn(*view_, Ino(".generations")),
            (std::vector<std::string>{".", "..", "g0@1", "g1@2"}));
  for (const std::string path : {".generations/g0", ".generations/g0@2", ".generations/g0@01",
                                 ".generations/g0@", ".generations/@1", ".generations/g0@99"}) {
    EXPECT_EQ(Walk(*view_, path).status().code(), ErrorCode::kEntryNotFound) << path;
  }
  EXPECT_EQ(LinkedName("at/2026-10-01"), "g0");
  EXPECT_EQ(LinkedName("at/2026-10-02T00:00:00"), "g1");
  EXPECT_EQ(LinkedName("at/9999"), "g1");
  // Every time that leads to a backup is one link: names asked for are not kept.
  const uint64_t inodes = view_->NumInodes();
  for (int day = 10; day < 28; ++day) {
    const std::string at = "at/2026-11-" + std::to_string(day) + "T01:02:03";
    EXPECT_EQ(Ino(at), Ino("at/9999")) << at;
  }
  EXPECT_EQ(view_->NumInodes(), inodes);
  EXPECT_EQ(LinkedName("by-uuid/" + uuid0_), "g0");
  for (const std::string path :
       {"at/2026-09-30", "at/0500", "at/garbage", "by-uuid/nothing", "nothing", "g0/nothing"}) {
    EXPECT_EQ(Walk(*view_, path).status().code(), ErrorCode::kEntryNotFound) << path;
  }
  auto at = List(*view_, Ino("at"));
  ASSERT_OK(at.status());
  EXPECT_EQ(Names(*at),
            (std::vector<std::string>{".", "..", "2026-10-01T00:00:00", "2026-10-02T00:00:00"}));
  EXPECT_EQ(view_->Readlink((*at)[2].ino).value(), "../g0");
  EXPECT_EQ((*at)[1].ino, kRoot);
  EXPECT_EQ(NamesIn(*view_, Ino("by-uuid")), (std::vector<std::string>{".", "..", uuid0_, uuid1_}));
  EXPECT_EQ(view_->Readlink(kRoot).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(view_->Readlink(9).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(view_->Attr(9).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_TRUE(view_->XattrNames(kRoot)->empty());
  EXPECT_EQ(view_->Xattr(kRoot, "user.stitchfs.uuid").status().code(), ErrorCode::kEntryNotFound);
}

TEST_F(StoreViewTest, BackupsReadThroughTheStoreUnderTheirSlotsNumbers) {
  const uint64_t file = Ino("g1/log/app.log");
  EXPECT_EQ(file >> StoreView::kSlotShift, 2u);
  EXPECT_EQ(view_->Attr(file)->st_ino, file);
  EXPECT_EQ(view_->Timeout(file), BackupView::kForever);
  EXPECT_EQ(ReadAll(*view_, file).value(), log1_);
  EXPECT_EQ(ReadAll(*view_, Ino("g1/.appended/log/app.log")).value(), log1_.substr(3000));
  auto top = List(*view_, Ino("g1"));
  ASSERT_OK(top.status());
  EXPECT_EQ(Names(*top), (std::vector<std::string>{".", "..", "db", "log"}));
  EXPECT_EQ((*top)[1].ino, kRoot) << "a backup's parent is the store";
  EXPECT_EQ((*top)[2].ino, Ino("g1/db"));
  EXPECT_EQ(view_->Xattr(file, "user.stitchfs.backup").value(), store_ + "/g1");
  EXPECT_EQ(view_->XattrNames(Ino("g1")).value().front(), "user.stitchfs.uuid");
  EXPECT_NE(Ino("g0/db/t.sql"), Ino("g1/db/t.sql")) << "each backup has its own inodes";
  EXPECT_GE(view_->NumInodes(), 4u + 2u);
}

TEST_F(StoreViewTest, BackupsAppearAndGoAtTheNextRescan) {
  const uint64_t g0_file = Ino("g0/db/t.sql");
  Put("g2", "2026-10-03 00:00:00", log1_, "g0");
  EXPECT_EQ(Walk(*view_, "g2").status().code(), ErrorCode::kEntryNotFound) << "within a second";
  Later();
  EXPECT_EQ(ReadAll(*view_, Ino("g2/db/t.sql")).value(), kSql);
  EXPECT_EQ(LinkedName("latest"), "g2");
  EXPECT_EQ(view_->Attr(kRoot)->st_mtim.tv_sec, now_ / 1000000000) << "the listing changed";
  fs::remove_all(store_ + "/g2");
  fs::create_directories(store_ + "/unfinished");
  testutil::WriteFile(store_ + "/unfinished/.lock", "");
  fs::rename(store_ + "/g0", dir_ / "g0-moved");
  Later();
  EXPECT_EQ(NamesIn(*view_, kRoot),
            (std::vector<std::string>{".", "..", "g1", "at", "by-uuid", "latest"}));
  EXPECT_EQ(view_->Attr(g0_file).status().code(), ErrorCode::kEntryNotFound) << "gone";
  EXPECT_EQ(view_->Open(g0_file).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(Walk(*view_, "by-uuid/" + uuid0_).status().code(), ErrorCode::kEntryNotFound);
}

// The store's own folders read a page at a time (as readdir does, offset after offset): the
// pages make the whole listing, built once per change of the store, and a change shows.
TEST_F(StoreViewTest, ListingsReadAPageAtATimeAreWholeAndFollowChanges) {
  auto paged = [&](uint64_t ino, size_t page) {
    std::vector<std::string> names;
    for (size_t offset = 0;; offset += page) {
      auto part = view_->ReadDir(ino, offset, page);
      EXPECT_OK(part.status());
      if (!part.ok() || part->empty()) return names;
      EXPECT_LE(part->size(), page);
      for (const DirEntry& e : *part) names.push_back(e.name);
    }
  };
  // A backup's folder is listed by name and type: its attributes cost opening the backup (a
  // store of thousands would open each for `ls`).
  auto root = view_->ReadDir(kRoot, 0, 100);
  ASSERT_OK(root.status());
  for (const DirEntry& e : *root) {
    EXPECT_EQ(e.costly, e.name == "g0" || e.name == "g1") << e.name;
  }
  EXPECT_TRUE(view_->ReadDir(StoreView::kGenerationsIno, 2, 1).value().at(0).costly);
  EXPECT_FALSE(view_->ReadDir(StoreView::kAtIno, 2, 1).value().at(0).costly);
  const uint64_t folders[] = {kRoot, StoreView::kAtIno, StoreView::kByUuidIno,
                              StoreView::kGenerationsIno};
  for (int round = 0; round < 2; ++round) {
    for (uint64_t ino : folders) {
      const std::vector<std::string> whole = NamesIn(*view_, ino);
      for (size_t page : {1, 2, 5}) EXPECT_EQ(paged(ino, page), whole) << ino << " " << page;
    }
    Put("g2", "2026-10-03 00:00:00", log1_, "g0");
    Rescanned();
    EXPECT_EQ(paged(kRoot, 2),
              (std::vector<std::string>{".", "..", "g0", "g1", "g2", "at", "by-uuid", "latest"}));
    EXPECT_EQ(paged(StoreView::kAtIno, 1).back(), "2026-10-03T00:00:00");
    EXPECT_EQ(paged(StoreView::kByUuidIno, 3).back(), uuids_["g2"]);
    EXPECT_EQ(paged(StoreView::kGenerationsIno, 1).back(), round == 0 ? "g2@3" : "g2@4");
    EXPECT_EQ(view_->Readlink(Ino("at/2026-10-03")).value(), "../g2");
    fs::remove_all(store_ + "/g2");
    Rescanned();
    EXPECT_EQ(paged(kRoot, 3),
              (std::vector<std::string>{".", "..", "g0", "g1", "at", "by-uuid", "latest"}));
    EXPECT_EQ(paged(StoreView::kAtIno, 2).size(), 4u);
  }
}

TEST(ListingCacheTest, AListingIsBuiltOncePerVersion) {
  ListingCache cache;
  int builds = 0;
  auto build = [&] { return std::vector<DirEntry>{{std::to_string(++builds), 1}}; };
  EXPECT_EQ(cache.Get(7, 1, build)->at(0).name, "1");
  EXPECT_EQ(cache.Get(7, 1, build)->at(0).name, "1");
  EXPECT_EQ(cache.Get(8, 1, build)->at(0).name, "2") << "each folder its own";
  EXPECT_EQ(cache.Get(7, 2, build)->at(0).name, "3");
  EXPECT_EQ(cache.Get(7, 2, build)->at(0).name, "3");
  EXPECT_EQ(builds, 3);
}

TEST_F(StoreViewTest, ABrokenBackupIsAnErrorForItsFolderAndEverythingInIt) {
  const uint64_t g1 = Ino("g1"), dir = Ino("g1/log"), file = Ino("g1/log/app.log");
  ASSERT_EQ(ReadAll(*view_, file).value(), log1_);
  const std::string manifest = testutil::ReadFile(store_ + "/g0/.backup");
  testutil::WriteFile(store_ + "/g0/.backup", "<config>");  // g1's base breaks.
  Rescanned();
  const auto eio = [](const engine::Status& s) {
    return s.code() != ErrorCode::kEntryNotFound && engine::ErrnoFor(s) == EIO;
  };
  EXPECT_TRUE(S_ISDIR(view_->Attr(g1)->st_mode)) << "still shows as a folder";
  EXPECT_TRUE(eio(view_->ReadDir(g1, 0, 10).status()));
  EXPECT_TRUE(eio(view_->Lookup(g1, "log").status())) << "never a negative entry";
  EXPECT_TRUE(eio(view_->Attr(file).status())) << view_->Attr(file).status().ToString();
  EXPECT_TRUE(eio(view_->Attr(dir).status()));
  EXPECT_TRUE(eio(view_->Lookup(dir, "app.log").status()));
  EXPECT_TRUE(eio(view_->Lookup(dir, "never-there").status()));
  EXPECT_TRUE(eio(view_->ReadDir(dir, 0, 10).status()));
  EXPECT_TRUE(eio(view_->Open(file).status()));
  EXPECT_TRUE(eio(view_->Xattr(file, "user.stitchfs.source").status()));
  EXPECT_TRUE(eio(view_->XattrNames(file).status()));
  EXPECT_EQ(view_->Xattr(file, "security.selinux").status().code(), ErrorCode::kEntryNotFound);
  EXPECT_TRUE(view_->XattrNames(g1)->empty()) << "the stand-in folder has none";
  const uint64_t g0 = Ino("g0");  // Its own manifest broke: a new slot, shown as a folder.
  EXPECT_TRUE(S_ISDIR(view_->Attr(g0)->st_mode));
  EXPECT_TRUE(eio(view_->ReadDir(g0, 0, 10).status()));
  EXPECT_EQ(NamesIn(*view_, Ino("at")).size(), 3u) << "no time to list for a broken backup";

  testutil::WriteFile(store_ + "/g0/.backup.new", manifest);
  fs::rename(store_ + "/g0/.backup.new", store_ + "/g0/.backup");
  Rescanned();
  EXPECT_EQ(ReadAll(*view_, file).value(), log1_) << "repaired: the same inode reads again";
  EXPECT_EQ(Walk(*view_, "app.log", dir).value(), file);
}

TEST_F(StoreViewTest, ABadBaseLocatorIsEioSayingWhy) {
  std::string manifest = testutil::ReadFile(store_ + "/g1/.backup");
  const size_t from = manifest.find("<base_backup>") + 13;
  manifest.replace(from, manifest.find("</base_backup>") - from, "File(&apos;g0");  // Unclosed.
  testutil::WriteFile(store_ + "/g1/.backup.new", manifest);
  fs::rename(store_ + "/g1/.backup.new", store_ + "/g1/.backup");
  Rescanned();
  const uint64_t g1 = Ino("g1");
  EXPECT_TRUE(S_ISDIR(view_->Attr(g1)->st_mode)) << "still shows as a folder";
  for (const engine::Status& s :
       {view_->ReadDir(g1, 0, 10).status(), view_->Lookup(g1, "log").status()}) {
    EXPECT_EQ(engine::ErrnoFor(s), EIO) << s.ToString();  // Not EINVAL, which fuse_ops won't log.
    EXPECT_NE(s.ToString().find("cannot parse base backup locator File(...)"), std::string::npos)
        << s.ToString();  // Shown without its text: an unparsable locator may hold a secret.
  }
  EXPECT_EQ(ReadAll(*view_, Ino("g0/log/app.log")).value(), log0_) << "the rest reads";
}

TEST_F(StoreViewTest, ReplacedInPlace) {
  const uint64_t file = Ino("g1/log/app.log"), base_file = Ino("g0/db/t.sql");
  ASSERT_OK(ReadAll(*view_, file).status());
  // g0 rewritten as itself (as prune's flattening leaves it): the same numbers, no break.
  fs::copy(store_ + "/g0", dir_ / "copy", fs::copy_options::recursive);
  fs::remove_all(store_ + "/g0");
  fs::rename(dir_ / "copy", store_ + "/g0");
  Later();
  EXPECT_EQ(Ino("g0/db/t.sql"), base_file);
  EXPECT_EQ(ReadAll(*view_, base_file).value(), kSql);
  EXPECT_EQ(ReadAll(*view_, file).value(), log1_) << "reopened through the new base";

  // g1 rewritten with its uuid and time but other bytes: new numbers, the old ones gone.
  const std::string longer = log1_ + "more";
  Put("g1", "2026-10-02 00:00:00", longer, "g0", uuid1_);
  Rescanned();
  EXPECT_EQ(view_->Attr(file).status().code(), ErrorCode::kEntryNotFound);
  const uint64_t renumbered = Ino("g1/log/app.log");
  EXPECT_NE(renumbered >> StoreView::kSlotShift, file >> StoreView::kSlotShift);
  EXPECT_EQ(ReadAll(*view_, renumbered).value(), longer);
  EXPECT_EQ(LinkedName("by-uuid/" + uuid1_), "g1");

  // g1 replaced by another backup: new numbers, and at/, by-uuid/ and latest follow its header.
  const std::string before = GenerationOf("g1");
  const std::string other = Put("g1", "2001-02-03 04:05:06", log0_);
  Rescanned();
  EXPECT_NE(GenerationOf("g1"), before);
  EXPECT_EQ(Walk(*view_, before + "/log/app.log").status().code(), ErrorCode::kEntryNotFound)
      << "the old generation never shows the new backup";
  EXPECT_EQ(view_->Attr(renumbered).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(ReadAll(*view_, Ino("g1/log/app.log")).value(), log0_);
  EXPECT_EQ(LinkedName("by-uuid/" + other), "g1");
  EXPECT_EQ(Walk(*view_, "by-uuid/" + uuid1_).status().code(), ErrorCode::kEntryNotFound);
  EXPECT_EQ(LinkedName("at/2001"), "g1");
  EXPECT_EQ(LinkedName("latest"), "g0");
}

// A path walk reads `latest`, then looks up the name it says; another backup takes the
// folder's place in between: the walk must not land in it.
TEST_F(StoreViewTest, ALinkFollowedWhileItsFolderIsReplacedNeverLeadsIntoTheOtherBackup) {
  const uint64_t latest = Ino("latest"), g1 = Ino("g1");
  EXPECT_EQ(view_->EntryTimeout(kRoot, g1), 1.0) << "a first generation: the kernel may keep it";
  now_ += LinkPins::kLifeNs / 2;
  EXPECT_EQ(view_->ReadlinkBy(7, latest).value(), "g1");
  Put("g1", "2026-10-03 00:00:00", log0_);  // Another backup, under the same name.
  now_ += LinkPins::kLifeNs * 6 / 10;       // The next rescan, while the walk goes on.
  ASSERT_OK(view_->Attr(kRoot).status());
  EXPECT_EQ(view_->LookupBy(7, kRoot, "g1").status().code(), ErrorCode::kEntryNotFound)
      << "thread 7 follows the link it read: it meant the backup that went";
  auto now = view_->LookupBy(8, kRoot, "g1");
  ASSERT_OK(now.status());
  EXPECT_NE(*now, g1);
  EXPECT_EQ(ReadAll(*view_, Walk(*view_, "log/app.log", *now).value()).value(), log0_);
  EXPECT_EQ(view_->EntryTimeout(kRoot, *now), 0.0) << "a replaced folder: asked on every walk";
  EXPECT_EQ(view_->EntryTimeout(kRoot, 0), 0.0) << "nor is an absent name kept";
  EXPECT_EQ(view_->EntryTimeout(Ino("at"), 0), 1.0);
  // Read again, the link means the new backup, for thread 7 too.
  EXPECT_EQ(view_->ReadlinkBy(7, latest).value(), "g1");
  EXPECT_EQ(view_->LookupBy(7, kRoot, "g1").value(), *now);
  // A pin lasts LinkPins::kLifeNs: an older one no longer holds the name.
  now_ += LinkPins::kLifeNs / 2;
  EXPECT_EQ(view_->ReadlinkBy(9, Ino("at/2026-10-01")).value(), "../g0");
  Put("g0", "2026-10-01 00:00:00", log0_ + "x");
  now_ += LinkPins::kLifeNs * 6 / 10;
  ASSERT_OK(view_->Attr(kRoot).status());
  EXPECT_EQ(view_->LookupBy(9, kRoot, "g0").status().code(), ErrorCode::kEntryNotFound);
  now_ += LinkPins::kLifeNs;
  EXPECT_OK(view_->LookupBy(9, kRoot, "g0").status());
}

// A folder named like one of the store's own names is linked through its generation.
TEST_F(StoreViewTest, AFolderNamedLikeAStoreNameIsLinkedByItsGeneration) {
  Put("at", "2030-01-01 00:00:00", log0_);
  Rescanned();
  EXPECT_EQ(Target("latest"), GenerationOf("at"));
  EXPECT_EQ(ReadAll(*view_, Ino(Target("latest") + "/log/app.log")).value(), log0_);
  EXPECT_EQ(Target("by-uuid/" + uuids_["at"]), "../" + GenerationOf("at"));
}

TEST(LinkPinsTest, APinIsPerThreadAndNameAndLastsItsLife) {
  LinkPins pins;
  pins.Pin(0, "a", 5, 100);
  EXPECT_EQ(pins.Pinned(0, "a", 100), 0u) << "an unknown caller pins nothing";
  pins.Pin(1, "a", 5, 100);
  EXPECT_EQ(pins.Pinned(1, "a", 100 + LinkPins::kLifeNs - 1), 5u);
  EXPECT_EQ(pins.Pinned(1, "a", 100 + LinkPins::kLifeNs), 0u);
  EXPECT_EQ(pins.Pinned(2, "a", 100), 0u);
  EXPECT_EQ(pins.Pinned(1, "b", 100), 0u);
  pins.Pin(1, "a", 6, 200);
  EXPECT_EQ(pins.Pinned(1, "a", 200), 6u) << "the last link read counts";
  for (uint64_t t = 1; t <= LinkPins::kMaxPins + 10; ++t) pins.Pin(t, "x", 1, 300);
  EXPECT_LE(pins.size(), LinkPins::kMaxPins);
  pins.Pin(1, "y", 1, 300 + LinkPins::kLifeNs);
  EXPECT_LE(pins.size(), 2u) << "expired pins are dropped first";
}

TEST_F(StoreViewTest, EvictedBackupsOpenAgainUnderTheSameNumbers) {
  StoreOptions o;
  o.max_open_backups = 1;
  Mount(o);
  const uint64_t f0 = Ino("g0/log/app.log"), f1 = Ino("g1/log/app.log");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ReadAll(*view_, f0).value(), log0_);
    EXPECT_EQ(ReadAll(*view_, f1).value(), log1_);
    EXPECT_EQ(Ino("g0/log/app.log"), f0);
  }
}

TEST(OpenBackupsTest, ABackupJustOpenedIsServedEvenBeyondTheBoundWhenAllAreInUse) {
  testutil::TempDir dir;
  for (const char* name : {"a", "b"}) {
    testutil::FixtureBackup b(dir / name);
    b.AddStored("f", name);
    ASSERT_OK(b.Write());
  }
  StoreOptions o;
  o.chain = testutil::LocalChain();
  o.max_open_backups = 1;
  OpenBackups backups(dir.path(), o, {});
  auto a = backups.View(1);
  ASSERT_OK(a.status());
  auto b = backups.View(2);  // `a` is in use: nothing can be closed now.
  ASSERT_OK(b.status());
  EXPECT_NE(*b, nullptr);
  EXPECT_EQ(backups.View(3).status().code(), ErrorCode::kEntryNotFound);
}

TEST_F(StoreViewTest, SharedInodesForFilesUnchangedBetweenBackups) {
  StoreOptions o;
  o.share_inodes = true;
  Mount(o);
  const auto st0 = view_->Attr(Ino("g0/db/t.sql")).value();
  const auto st1 = view_->Attr(Ino("g1/db/t.sql")).value();
  EXPECT_EQ(st0.st_ino, st1.st_ino);
  EXPECT_EQ(st0.st_ino >> StoreView::kSlotShift, 1u) << "the number of g0, the oldest";
  EXPECT_NE(st0.st_ino & StoreView::kSharedBit, 0u);
  EXPECT_GE(st1.st_nlink, 2u);
  EXPECT_NE(view_->Attr(Ino("g0/log/app.log"))->st_ino, view_->Attr(Ino("g1/log/app.log"))->st_ino);
}

}  // namespace
}  // namespace stitchfs::fs::fstest
