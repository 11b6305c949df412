// MountState: everything the FUSE handlers share, immutable after the mount starts.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "engine/backup_chain.h"
#include "engine/backup_stats.h"
#include "fs/inode_table.h"

namespace stitchfs::fs {

// Thread-safe: immutable after the mount starts, except the figures computed on first use.
struct MountState {
  MountState(std::shared_ptr<const engine::BackupChain> c, InodeTable t)
      : chain(std::move(c)), table(std::move(t)) {}

  std::shared_ptr<const engine::BackupChain> chain;
  InodeTable table;
  AttrOptions attr;
  uint64_t total_size = 0;
  double timeout = 365.0 * 24 * 3600;  // Backup content never changes.
  bool foreground = false;

  // system.backups-style figures; resolving every entry is deferred to the first request so
  // a mount of a million files stays instant.
  const engine::BackupStats& Stats() const {
    std::call_once(stats_once_, [this] {
      auto st = engine::ComputeStats(*chain);
      if (st.ok()) stats_ = *st;
    });
    return stats_;
  }

 private:
  mutable std::once_flag stats_once_;
  mutable engine::BackupStats stats_;
};

// Logs one line (stderr in the foreground, syslog otherwise).
void LogError(const MountState& s, const std::string& line);

}  // namespace stitchfs::fs
