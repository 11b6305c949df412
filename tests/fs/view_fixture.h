// ViewTest: a 3-deep ClickHouse-format chain (b0 <- b1 <- b2, a day apart) in a folder whose
// name needs escaping in JSON, and b2 opened as a BackupView, for the tests of BackupView and
// of the provenance attributes.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "engine/read/open_resolved.h"
#include "engine/read/resolved_backup.h"
#include "fs/backup_view.h"
#include "tests/fs/namespace_helpers.h"
#include "tests/testutil/context.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::fs::fstest {

class ViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    using testutil::FixtureBackup;
    a_ = testutil::RandomBytes(5000, 1);
    b_ = testutil::RandomBytes(3000, 2);
    c_ = testutil::RandomBytes(100, 3);
    FixtureBackup b0(dir_ / "we\"ird \\ dir/b0");
    b0.header.timestamp = "2026-10-01 00:00:00";
    b0.AddStored("log/app.log", a_);
    b0.AddStored("metadata/db.sql", kSql);
    b0.AddStored("old/name.bin", "renamed content");
    ASSERT_OK(b0.Write());
    FixtureBackup b1(dir_ / "we\"ird \\ dir/b1");
    b1.header.timestamp = "2026-10-02 00:00:00";
    b1.SetBase(b0);
    b1.AddStitched("log/app.log", a_ + b_, a_.size());
    b1.AddFromBase("metadata/db.sql", kSql);
    b1.AddFromBase("new/name.bin", "renamed content");
    ASSERT_OK(b1.Write());
    FixtureBackup b2(dir_ / "we\"ird \\ dir/b2");
    b2.header.timestamp = "2026-10-03 00:00:00";
    b2.SetBase(b1);
    b2.AddStitched("log/app.log", a_ + b_ + c_, a_.size() + b_.size());
    b2.AddFromBase("metadata/db.sql", kSql);
    b2.AddFromBase("new/name.bin", "renamed content");
    b2.AddStored("copy/a.bin", "same bytes twice");
    b2.AddDuplicate("copy/b.bin", "same bytes twice", "copy/a.bin");
    b2.AddEmpty("empty.txt");
    ASSERT_OK(b2.Write());
    uuids_ = {b2.uuid(), b1.uuid(), b0.uuid()};
    engine::ResolveOptions r;
    r.origins = true;
    auto backup = engine::OpenResolved(b2.dir(), testutil::LocalChain(), r);
    ASSERT_OK(backup.status());
    backup_ = *backup;
    view_ = std::make_unique<BackupView>(backup_, Attr());
  }
  AttrOptions Attr() const {
    AttrOptions a;
    a.default_mtime_sec = engine::CivilToEpochSeconds(backup_->top().header().time);
    return a;
  }
  uint64_t Ino(std::string_view path) const {
    auto ino = Walk(*view_, path);
    EXPECT_TRUE(ino.ok()) << path << ": " << ino.status().ToString();
    return ino.ok() ? *ino : 0;
  }
  struct stat Stat(std::string_view path) const {
    auto st = view_->Attr(Ino(path));
    EXPECT_TRUE(st.ok()) << path << ": " << st.status().ToString();
    struct stat none = {};
    return st.ok() ? *st : none;
  }

  static constexpr const char* kSql = "CREATE DATABASE db;\n";
  testutil::TempDir dir_;
  std::string a_, b_, c_;
  std::vector<std::string> uuids_;  // By level: b2, b1, b0.
  std::shared_ptr<const engine::ResolvedBackup> backup_;
  std::unique_ptr<BackupView> view_;
};

}  // namespace stitchfs::fs::fstest
