// MemStoreTest: a store of backups in a MemStorage, written by the real writer from a source
// folder on disk, and the checks the suites on MemStorage and FaultStorage share: a backup
// opens with its whole chain and every file reads byte-exact, and nothing in the store opens
// as a half backup.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "engine/backends/fault/fault_storage.h"
#include "engine/backends/mem/mem_storage.h"
#include "engine/read/open_resolved.h"
#include "engine/read/resolved_backup.h"
#include "engine/write/snapshot_writer.h"
#include "tests/testutil/fixture.h"

namespace stitchfs::engine {

using Tree = std::map<std::string, std::string>;  // Entry name -> bytes.

class MemStoreTest : public ::testing::Test {
 protected:
  static constexpr const char* kStore = "/mem/store";

  static std::string At(const std::string& name) { return std::string(kStore) + "/" + name; }

  // The source folder holds exactly `files` from now on.
  void SetSource(const Tree& files) {
    std::filesystem::remove_all(dir_ / "src");
    std::filesystem::create_directories(dir_ / "src");
    for (const auto& [name, bytes] : files) testutil::WriteFile(dir_ / ("src/" + name), bytes);
    src_ = files;
  }

  // Writes the source as backup `name` of the store through `storage` (on backup `base` of
  // the store, if not empty), on day `day` of 2024 (prune orders by it).
  StatusOr<BackupSummary> Backup(const std::shared_ptr<const Storage>& storage,
                                 const std::string& name, const std::string& base = "",
                                 int day = 1) {
    BackupOptions o;
    o.source = dir_ / "src";
    o.dest = At(name);
    o.base = base.empty() ? "" : At(base);
    o.chain.storage = storage;
    o.jobs = 1;
    o.timestamp = "2024-01-" + std::string(day < 10 ? "0" : "") + std::to_string(day) + " 00:00:00";
    return WriteBackup(o, nullptr);
  }

  // Writes backup `name` through a fresh process with no faults, and records what it holds.
  void Written(const std::string& name, const std::string& base = "", int day = 1) {
    auto s = Backup(mem_->NewProcess(), name, base, day);
    ASSERT_TRUE(s.ok()) << name << ": " << s.status().ToString();
    written_[name] = src_;
  }

  // "" if backup `path` opens through `storage` with its whole chain and holds exactly `want`,
  // byte for byte; else "error: " and the failure that kept it from being read, or "wrong: "
  // and what it holds that it should not.
  static std::string Check(const std::shared_ptr<const Storage>& storage, const std::string& path,
                           const Tree& want, size_t* depth = nullptr) {
    ChainOptions o;
    o.storage = storage;
    auto chain = OpenResolved(path, o);
    if (!chain.ok()) return "error: " + path + " does not open: " + chain.status().ToString();
    if (depth) *depth = (*chain)->depth();
    const Manifest& m = (*chain)->top().manifest();
    if (m.num_entries() != want.size()) {
      return "wrong: " + path + " holds " + std::to_string(m.num_entries()) + " files, not " +
             std::to_string(want.size());
    }
    for (size_t i = 0; i < m.num_entries(); ++i) {
      const std::string name(m.name(i));
      auto it = want.find(name);
      if (it == want.end()) return "wrong: " + path + " holds " + name;
      auto file = (*chain)->OpenEntry(i);
      if (!file.ok()) return "error: " + path + "/" + name + ": " + file.status().ToString();
      std::string got((*file)->size(), '\0');
      auto n = (*file)->ReadAt(0, got);
      if (!n.ok()) return "error: " + path + "/" + name + ": " + n.status().ToString();
      if (*n != got.size() || got != it->second) return "wrong: " + path + "/" + name + " bytes";
    }
    return "";
  }

  // "" if every backup the store lists opens and is one of `written_` holding what it was
  // written with (or, named `fresh`, holds `fresh_tree`), and every name in `required` is
  // listed; else what is wrong. Read through a new process of the disk, with no faults.
  std::string CheckStore(const std::set<std::string>& required, const std::string& fresh = "",
                         const Tree& fresh_tree = {}) {
    auto reader = mem_->NewProcess();
    auto listed = reader->ScanStore(kStore);
    if (!listed.ok() && listed.status().code() == ErrorCode::kBackupNotFound) {
      listed = std::vector<StoreFolder>();  // No store yet: no backup.
    }
    if (!listed.ok()) return "the store does not list: " + listed.status().ToString();
    std::set<std::string> seen;
    for (const StoreFolder& f : *listed) {
      seen.insert(f.name);
      const bool is_fresh = f.name == fresh;
      auto it = written_.find(f.name);
      if (!is_fresh && it == written_.end()) return "unexpected backup " + f.name;
      std::string why = Check(reader, f.path, is_fresh ? fresh_tree : it->second);
      if (!why.empty()) return why;
    }
    for (const std::string& name : required) {
      if (!seen.count(name)) return "backup " + name + " is gone";
    }
    return "";
  }

  std::shared_ptr<MemStorage> mem_ = MemStorage::Create();
  testutil::TempDir dir_;
  Tree src_;
  std::map<std::string, Tree> written_;  // Backups written, and what they hold.
};

}  // namespace stitchfs::engine
