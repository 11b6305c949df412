#include "engine/store/store_index.h"

#include <sys/stat.h>

#include <filesystem>

#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

// How often a store on this machine is read again (Storage::StoreRescanNs).
constexpr int64_t kLocalRescanNs = 1000000000;

namespace fs = std::filesystem;
using testutil::TempDir;

// A store under a clock the test moves.
class StoreIndexTest : public ::testing::Test {
 protected:
  // Writes a backup with timestamp `ts` (and `uuid`, if given) as store/`name`: made aside and
  // renamed into place, replacing what was there.
  std::string Put(const std::string& name, const std::string& ts = "2026-10-01 12:00:00",
                  const std::string& uuid = "", const std::string& content = "x") {
    const std::string aside = dir_ / "aside";
    testutil::FixtureBackup b(aside);
    b.header.timestamp = ts;
    if (!uuid.empty()) b.header.uuid = uuid;
    b.AddStored("f.txt", content);
    EXPECT_OK(b.Write());
    fs::remove_all(store_ + "/" + name);
    fs::rename(aside, store_ + "/" + name);
    return b.uuid();
  }
  // Sets the text of the header tag `tag` of store/`name`/.backup to `value`, in place.
  void SetTag(const std::string& name, const std::string& tag, const std::string& value) {
    const std::string path = store_ + "/" + name + "/.backup";
    std::string xml = testutil::ReadFile(path);
    const size_t from = xml.find("<" + tag + ">") + tag.size() + 2;
    const size_t to = xml.find("</" + tag + ">");
    ASSERT_LT(from, to) << tag;
    testutil::WriteFile(path, xml.replace(from, to - from, value));
  }
  StoreChanges Rescan(bool force = false) {
    std::unique_lock<std::mutex> lock(mu_);
    return index_.Rescan(lock, force);
  }
  // Moves the clock past the rescan interval and rescans.
  StoreChanges Later() {
    now_ += kLocalRescanNs;
    return Rescan();
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (uint64_t k : index_.ByName()) out.push_back(index_.slot(k)->name);
    return out;
  }
  std::string NameOf(uint64_t k) const { return k ? index_.slot(k)->name : "(none)"; }

  TempDir dir_;
  const std::string store_ = [this] {
    fs::create_directories(dir_ / "store");
    return dir_ / "store";
  }();
  int64_t now_ = int64_t{1700000000} * 1000000000;
  std::mutex mu_;
  StoreIndex index_{store_, testutil::LocalChain().storage, [this] { return now_; }};
};

TEST_F(StoreIndexTest, BackupsAppearAndDisappearAtMostOnceASecond) {
  EXPECT_TRUE(Rescan().scanned) << "the first scan is never put off";
  EXPECT_EQ(index_.size(), 0u);
  Put("g1");
  Put("g0");
  EXPECT_FALSE(Rescan().scanned) << "within a second of the last scan";
  EXPECT_EQ(index_.size(), 0u);
  now_ += kLocalRescanNs - 1;
  EXPECT_FALSE(Rescan().scanned);
  now_ += 1;
  const StoreChanges first = Rescan();
  EXPECT_TRUE(first.scanned);
  EXPECT_TRUE(first.reset.empty());
  EXPECT_EQ(Names(), (std::vector<std::string>{"g0", "g1"}));
  EXPECT_EQ(index_.changed_ns(), now_);
  const uint64_t g1 = index_.Named("g1");
  ASSERT_NE(g1, 0u);
  EXPECT_EQ(index_.slot(g1)->path, store_ + "/g1");
  EXPECT_EQ(index_.AtPath(store_ + "/g1"), g1);

  Put("g2");
  EXPECT_TRUE(Rescan(/*force=*/true).scanned) << "force scans at once";
  EXPECT_EQ(Names(), (std::vector<std::string>{"g0", "g1", "g2"}));

  const int64_t before = index_.changed_ns();
  EXPECT_TRUE(Later().reset.empty());
  EXPECT_EQ(index_.changed_ns(), before) << "nothing changed";

  fs::remove_all(store_ + "/g1");
  const StoreChanges gone = Later();
  EXPECT_EQ(gone.reset, std::vector<uint64_t>{g1});
  EXPECT_EQ(Names(), (std::vector<std::string>{"g0", "g2"}));
  EXPECT_FALSE(index_.slot(g1)->present);
  EXPECT_EQ(index_.Named("g1"), 0u);
  EXPECT_EQ(index_.AtPath(store_ + "/g1"), 0u);
  EXPECT_EQ(index_.changed_ns(), now_);
}

TEST_F(StoreIndexTest, AFolderMovedAwayAndBackKeepsItsSlot) {
  Put("g0");
  Rescan();
  const uint64_t k = index_.Named("g0");
  fs::rename(store_ + "/g0", dir_ / "away");
  Later();
  EXPECT_EQ(index_.Named("g0"), 0u);
  fs::rename(dir_ / "away", store_ + "/g0");
  Later();
  EXPECT_EQ(index_.Named("g0"), k) << "same folder, same .backup: the same backup";
  EXPECT_EQ(index_.size(), 1u);
}

TEST_F(StoreIndexTest, AnUnfinishedBackupNeverAppears) {
  Put("g0");
  testutil::WriteFile(store_ + "/unfinished/.lock", "");
  testutil::WriteFile(store_ + "/unfinished/f.txt", "x");
  testutil::WriteFile(store_ + "/empty/.keep", "");
  Put(".prune-work");  // Dot folders are prune's work folders.
  Rescan();
  EXPECT_EQ(Names(), std::vector<std::string>{"g0"});
  testutil::WriteFile(store_ + "/unfinished/.backup",
                      testutil::ReadFile(store_ + "/g0/.backup"));  // Finished.
  Later();
  EXPECT_EQ(Names(), (std::vector<std::string>{"g0", "unfinished"}));
}

TEST_F(StoreIndexTest, AFifoOrSymlinkNamedBackupIsNoBackup) {
  Put("g0");
  fs::create_directories(store_ + "/fifo");
  ASSERT_EQ(::mkfifo((store_ + "/fifo/.backup").c_str(), 0644), 0);
  fs::create_directories(store_ + "/linked");
  fs::create_symlink(store_ + "/g0/.backup", store_ + "/linked/.backup");
  fs::create_directories(store_ + "/folder/.backup");
  fs::create_directory_symlink(store_ + "/g0", store_ + "/symlinked");
  Rescan();  // Never blocks on the FIFO.
  EXPECT_EQ(Names(), std::vector<std::string>{"g0"});
}

TEST_F(StoreIndexTest, TheSameBackupRewrittenInPlaceKeepsItsSlot) {
  const std::string uuid = Put("g1", "2026-10-02 00:00:00", "", "old");
  Put("g0", "2026-10-01 00:00:00");
  Rescan();
  const uint64_t k = index_.Named("g1");
  EXPECT_TRUE(index_.Show(k, 111));
  const ManifestIdentity before = index_.slot(k)->manifest;

  Put("g1", "2026-10-02 00:00:00", uuid, "flattened");  // Prune's flattening: same uuid, time.
  const StoreChanges changes = Later();
  EXPECT_EQ(changes.reset, std::vector<uint64_t>{k}) << "what was opened from it is stale";
  EXPECT_EQ(index_.Named("g1"), k);
  EXPECT_NE(index_.slot(k)->manifest, before);
  EXPECT_EQ(index_.ByUuid(uuid), k);
  EXPECT_EQ(index_.Latest(), k);
  EXPECT_TRUE(index_.Show(k, 111)) << "the same content again";

  // Same uuid and time, but other content: never under the same numbers.
  EXPECT_FALSE(index_.Show(k, 222));
  EXPECT_FALSE(index_.slot(k)->present);
  const uint64_t fresh = index_.Named("g1");
  EXPECT_GT(fresh, k);
  EXPECT_EQ(index_.slot(fresh)->uuid, uuid);
  EXPECT_EQ(index_.slot(fresh)->signature, 0u);
  EXPECT_EQ(index_.ByUuid(uuid), fresh);
  EXPECT_EQ(index_.FirstWithUuid(uuid), fresh);
  EXPECT_EQ(index_.Latest(), fresh);
  EXPECT_EQ(index_.At("2026-10-02"), fresh);
  EXPECT_TRUE(index_.Show(fresh, 222));
}

TEST_F(StoreIndexTest, AnotherBackupInTheSamePlaceGetsANewSlot) {
  const std::string old_uuid = Put("g1", "2026-10-02 00:00:00");
  Put("g0", "2026-10-01 00:00:00");
  Rescan();
  const uint64_t k = index_.Named("g1");
  EXPECT_EQ(index_.Latest(), k);
  const std::string new_uuid = Put("g1", "2001-02-03 04:05:06");
  const StoreChanges changes = Later();
  EXPECT_EQ(changes.reset, std::vector<uint64_t>{k});
  const uint64_t fresh = index_.Named("g1");
  EXPECT_NE(fresh, k);
  EXPECT_FALSE(index_.slot(k)->present);
  EXPECT_EQ(index_.ByUuid(old_uuid), 0u);
  EXPECT_EQ(index_.ByUuid(new_uuid), fresh);
  EXPECT_EQ(NameOf(index_.At("2001")), "g1");
  EXPECT_EQ(index_.At("2001"), fresh);
  EXPECT_EQ(NameOf(index_.Latest()), "g0") << "latest follows the new header";
  EXPECT_EQ(Names(), (std::vector<std::string>{"g0", "g1"}));
  EXPECT_EQ(index_.WithHeader().size(), 2u);
}

TEST_F(StoreIndexTest, HostileHeadersAreErrorsOfTheirSlotOnly) {
  Put("g0");
  Put("slashuuid");
  SetTag("slashuuid", "uuid", "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeee/eee");
  Put("dotdot");
  SetTag("dotdot", "timestamp", "..");
  Put("damaged");
  testutil::WriteFile(store_ + "/damaged/.backup", "<config>");
  Rescan();
  EXPECT_EQ(Names(), (std::vector<std::string>{"damaged", "dotdot", "g0", "slashuuid"}));
  for (const auto& [name, what] : std::vector<std::pair<std::string, std::string>>{
           {"slashuuid", "uuid"}, {"dotdot", "timestamp"}, {"damaged", "line"}}) {
    const StoreSlot& s = *index_.slot(index_.Named(name));
    EXPECT_EQ(s.error.code(), ErrorCode::kBackupDamaged) << name << ": " << s.error.ToString();
    EXPECT_NE(s.error.message().find(what), std::string::npos) << s.error.ToString();
    EXPECT_FALSE(s.has_header()) << name;
  }
  const uint64_t g0 = index_.Named("g0");
  EXPECT_TRUE(index_.slot(g0)->error.ok());
  EXPECT_EQ(index_.WithHeader(), std::vector<uint64_t>{g0});
  EXPECT_EQ(index_.Latest(), g0);
  EXPECT_EQ(index_.At("9999"), g0);
  EXPECT_EQ(index_.ByUuid(""), 0u);
  EXPECT_EQ(index_.ByUuid("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeee/eee"), 0u);
}

TEST_F(StoreIndexTest, AtEveryPrecisionAndInFarYears) {
  Put("a", "1970-01-01 00:00:00");
  Put("b", "1999-12-31 23:59:59");
  Put("c", "2026-11-02 13:00:05");
  Put("d", "2999-06-15 08:00:00");
  Put("e", "9999-12-31 23:59:59");
  Rescan();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"0000", "(none)"},
      {"0500", "(none)"},
      {"1600", "(none)"},
      {"1969-12-31T23:59:59", "(none)"},
      {"1970", "a"},
      {"1970-01-01T00:00:00", "a"},
      {"1999-12-31T23:59:58", "a"},
      {"1999", "b"},
      {"2026", "c"},
      {"2026-11", "c"},
      {"2026-11-02", "c"},
      {"2026-11-02T13", "c"},
      {"2026-11-02T13:00", "c"},
      {"2026-11-02T13:00:05", "c"},
      {"2026-11-02 13:00:05", "c"},
      {"2026-11-02T13:00:04", "b"},
      {"2026-11-02T12", "b"},
      {"2026-11-01", "b"},
      {"2026-10", "b"},
      {"2998", "c"},
      {"2999", "d"},
      {"9999-12-31T23:59:58", "d"},
      {"9999", "e"},
      {"2026-13", "(none)"},
      {"2026-11-31", "(none)"},
      {"26", "(none)"},
      {"10000", "(none)"},
      {"latest", "(none)"},
      {"", "(none)"},
  };
  for (const auto& [name, want] : cases) EXPECT_EQ(NameOf(index_.At(name)), want) << name;
  EXPECT_EQ(NameOf(index_.Latest()), "e");
}

TEST_F(StoreIndexTest, LatestBreaksTiesByNameAndSkipsBackupsWithoutHeader) {
  Rescan();
  EXPECT_EQ(index_.Latest(), 0u) << "an empty store";
  Put("x", "2026-10-01 12:00:00");
  Put("y", "2026-10-01 12:00:00");
  Put("z", "2030-01-01 00:00:00");
  testutil::WriteFile(store_ + "/z/.backup", "<config>");
  Later();
  EXPECT_EQ(NameOf(index_.Latest()), "y");
  EXPECT_EQ(NameOf(index_.At("2026-10-01T12:00:00")), "y");
}

TEST_F(StoreIndexTest, ByUuidTakesTheLastCopyAndFirstWithUuidTheFirst) {
  const std::string uuid = Put("g0");
  Rescan();
  const uint64_t g0 = index_.Named("g0");
  fs::copy(store_ + "/g0", store_ + "/copy", fs::copy_options::recursive);
  Later();
  const uint64_t copy = index_.Named("copy");
  EXPECT_GT(copy, g0);
  EXPECT_EQ(index_.ByUuid(uuid), copy);
  EXPECT_EQ(index_.FirstWithUuid(uuid), g0) << "stable: inode numbers derive from it";
  EXPECT_EQ(index_.ByUuid("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"), 0u);
  EXPECT_EQ(index_.WithHeader(), (std::vector<uint64_t>{g0, copy}));
}

TEST_F(StoreIndexTest, AStoreThatCannotBeReadKeepsWhatWasKnownAndAGoneOneHasNoBackups) {
  Put("g0");
  Rescan();
  const uint64_t g0 = index_.Named("g0");
  fs::rename(store_, dir_ / "aside-store");
  fs::create_symlink("store", store_);  // A loop: ELOOP, an error that may pass.
  const StoreChanges failed = Later();
  EXPECT_FALSE(failed.scanned);
  EXPECT_EQ(index_.Named("g0"), g0);
  fs::remove(store_);
  fs::rename(dir_ / "aside-store", store_);
  EXPECT_TRUE(Later().reset.empty());
  EXPECT_EQ(index_.Named("g0"), g0);
  fs::remove_all(store_);
  const StoreChanges gone = Later();
  EXPECT_EQ(gone.reset, std::vector<uint64_t>{g0});
  EXPECT_EQ(index_.size(), 1u);
  EXPECT_EQ(index_.Named("g0"), 0u);
}

TEST_F(StoreIndexTest, TheLockIsFreeWhileTheStoreIsReadAndOneScanRunsAtATime) {
  fs::remove_all(store_);
  fs::create_symlink("store", store_);  // Reading it fails, and the log line comes mid-scan.
  StoreIndex* index = nullptr;
  bool free_while_read = false, nested_scan = true;
  StoreIndex outer(
      store_, testutil::LocalChain().storage, [this] { return now_; },
      [&](const std::string&) {
        std::unique_lock<std::mutex> inner(mu_, std::try_to_lock);
        free_while_read = inner.owns_lock();
        if (inner.owns_lock()) nested_scan = index->Rescan(inner, /*force=*/true).scanned;
      });
  index = &outer;
  std::unique_lock<std::mutex> lock(mu_);
  outer.Rescan(lock, /*force=*/true);
  EXPECT_TRUE(lock.owns_lock());
  EXPECT_TRUE(free_while_read);
  EXPECT_FALSE(nested_scan) << "a scan while another one runs does nothing";
}

}  // namespace
}  // namespace stitchfs::engine
