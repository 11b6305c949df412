// The local StoreMoves of prune: marks beside the backups it removes, seen by writers however
// they name the base (through a symlink; an archive), and what an interrupted prune left.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "engine/backends/routing_storage.h"
#include "engine/storage/store_moves.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {
namespace {

namespace fs = std::filesystem;
using testutil::TempDir;

// The moves of the store at `store`, with the store's prune lock held.
void LockedMoves(const Storage& storage, const std::string& store,
                 std::unique_ptr<StoreMoves>* out) {
  auto moves = storage.MovesFor(store);
  ASSERT_TRUE(moves.ok()) << moves.status().ToString();
  ASSERT_TRUE((*moves)->Lock().ok());
  *out = std::move(*moves);
}

TEST(LocalMovesTest, AMarkIsSeenThroughASymlinkAndOnAnArchive) {
  TempDir dir;
  fs::create_directories(dir / "store/b0");
  testutil::WriteFile(dir / "store/a.zip", "not read");
  const auto storage = RoutingStorage::Create();
  std::unique_ptr<StoreMoves> moves;
  ASSERT_NO_FATAL_FAILURE(LockedMoves(*storage, dir / "store", &moves));
  ASSERT_EQ(::symlink((dir / "store/b0").c_str(), (dir / "latest").c_str()), 0);
  EXPECT_FALSE(*storage->BeingRemoved(dir / "latest"));
  ASSERT_TRUE(moves->SetAside(dir / "store/b0").ok());
  ASSERT_TRUE(moves->SetAside(dir / "store/a.zip").ok());
  ASSERT_TRUE(moves->Sync().ok());
  EXPECT_TRUE(*storage->BeingRemoved(dir / "store/b0"));
  EXPECT_TRUE(*storage->BeingRemoved(dir / "latest")) << "named through a symlink";
  EXPECT_TRUE(*storage->BeingRemoved(dir / "store/a.zip")) << "an archive";
  EXPECT_TRUE(fs::exists(dir / "store/b0")) << "marked, still there";
  moves->PutBack(dir / "store/b0");
  EXPECT_FALSE(*storage->BeingRemoved(dir / "latest"));
  ASSERT_TRUE(moves->Remove(dir / "store/a.zip").ok());
  EXPECT_FALSE(fs::exists(dir / "store/a.zip"));
  EXPECT_FALSE(*storage->BeingRemoved(dir / "store/a.zip"));
  EXPECT_FALSE(*storage->BeingRemoved(dir / "nothing/here"));
}

// A folder an older version set aside (renamed before its proof; or, killed while deleting it,
// half gone) is never deleted, nor put back by itself: it is left, with a warning saying how to
// put it back. What this version took out after its proof goes, and marks of backups never
// taken out are taken away.
TEST(LocalMovesTest, LeftoversOfAnInterruptedPrune) {
  TempDir dir;
  testutil::WriteFile(dir / "store/.b1.stitch-deleting/.backup", "b1");
  fs::create_directories(dir / "store/.b3.stitch-removed");
  fs::create_directories(dir / "store/b4");
  testutil::WriteFile(dir / "store/.b4.stitch-removing", "");
  fs::create_directories(dir / "store/.b5.stitch-deleting");   // Taken out after the proof
  testutil::WriteFile(dir / "store/.b5.stitch-removing", "");  // (its mark beside it).
  // An older version's, with a mark that is a new b6's.
  fs::create_directories(dir / "store/.b6.stitch-deleting");
  fs::create_directories(dir / "store/b6");
  testutil::WriteFile(dir / "store/.b6.stitch-removing", "");
  const auto storage = RoutingStorage::Create();
  std::unique_ptr<StoreMoves> moves;
  ASSERT_NO_FATAL_FAILURE(LockedMoves(*storage, dir / "store", &moves));
  const std::vector<std::string> said = moves->RemoveLeftovers();
  EXPECT_EQ(testutil::ReadFile(dir / "store/.b1.stitch-deleting/.backup"), "b1") << "left";
  EXPECT_FALSE(fs::exists(dir / "store/b1"));
  ASSERT_EQ(said.size(), 2u);
  const std::string all = said[0] + "\n" + said[1];
  EXPECT_NE(all.find(".b1.stitch-deleting as it is"), std::string::npos) << all;
  EXPECT_NE(all.find("rename it back to b1"), std::string::npos) << all;
  EXPECT_NE(all.find(".b6.stitch-deleting as it is"), std::string::npos) << all;
  EXPECT_TRUE(fs::exists(dir / "store/.b6.stitch-deleting"));
  EXPECT_TRUE(fs::exists(dir / "store/b6"));
  EXPECT_FALSE(fs::exists(dir / "store/.b3.stitch-removed"));
  EXPECT_FALSE(fs::exists(dir / "store/.b4.stitch-removing"));
  EXPECT_TRUE(fs::exists(dir / "store/b4"));
  EXPECT_FALSE(fs::exists(dir / "store/.b5.stitch-deleting"));
  EXPECT_FALSE(fs::exists(dir / "store/.b5.stitch-removing"));
}

}  // namespace
}  // namespace stitchfs::engine
