// ChainTest: a 3-deep ClickHouse-format chain (b0 <- b1 <- b2) with every kind of entry, for
// the tests of ResolvedBackup (opening chains and reading through them).
#pragma once

#include <gtest/gtest.h>

#include "tests/testutil/fixture.h"

namespace stitchfs::engine {

// A 3-deep ClickHouse-format chain with every kind of entry.
class ChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    using testutil::FixtureBackup;
    using testutil::RandomBytes;
    a_ = RandomBytes(5000, 1);
    b_ = RandomBytes(3000, 2);
    c_ = RandomBytes(100, 3);
    FixtureBackup b0(dir_ / "b0");
    b0.AddStored("log/app.log", a_);
    b0.AddStored("metadata/db.sql", "CREATE DATABASE db;\n");
    b0.AddStored("data/t/p1/columns.txt", "columns format version: 1\n");
    b0.AddDuplicate("data/t/p2/columns.txt", "columns format version: 1\n",
                    "data/t/p1/columns.txt");
    b0.AddStored("old/name.bin", "renamed content");
    b0.AddEmpty("empty.txt");
    ASSERT_OK(b0.Write());

    FixtureBackup b1(dir_ / "b1");
    b1.SetBase(b0);
    b1.AddStitched("log/app.log", a_ + b_, a_.size());
    b1.AddFromBase("metadata/db.sql", "CREATE DATABASE db;\n");
    b1.AddFromBase("new/name.bin", "renamed content");  // renamed: found by (size, checksum)
    b1.AddFromBase("data/t/p3/columns.txt", "columns format version: 1\n");
    b1.AddStored("fresh.bin", "fresh");
    b1.AddEmpty("empty.txt");
    ASSERT_OK(b1.Write());

    FixtureBackup b2(dir_ / "b2");
    b2.SetBase(b1);
    b2.AddStitched("log/app.log", a_ + b_ + c_, a_.size() + b_.size());
    b2.AddFromBase("metadata/db.sql", "CREATE DATABASE db;\n");
    b2.AddFromBase("new/name.bin", "renamed content");
    b2.AddStored("copy/a.bin", "same bytes twice");
    b2.AddDuplicate("copy/b.bin", "same bytes twice", "copy/a.bin");
    b2.AddEmpty("empty.txt");
    ASSERT_OK(b2.Write());
    b0_uuid_ = b0.uuid();
  }

  testutil::TempDir dir_;
  std::string a_, b_, c_, b0_uuid_;
};

}  // namespace stitchfs::engine
