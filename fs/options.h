// Command line of `stitchfs`, parsed into a plain struct. Unknown options are errors.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/backends/s3/s3_config.h"
#include "engine/base/status_or.h"
#include "engine/read/chain_options.h"

namespace stitchfs::fs {

struct Options {
  std::string backup;
  std::string mountpoint;
  bool foreground = false;
  bool debug = false;
  bool single_thread = false;
  bool help = false;
  bool version = false;
  bool allow_other = false;
  bool default_permissions = false;
  std::optional<uint32_t> uid, gid, umask;
  unsigned readahead_kb = 1024;  // Set on the mount's bdi when permitted; 0 keeps the default.
  uint32_t walk_ahead = 64;      // Files read ahead of a tree walk (WalkAhead); 0: off.
  bool noxattr = false;  // No extended attributes: ls -l needs no round trip per file for them.
  bool backup_manifest = true;  // `.backup` (the flat manifest) at each backup's root.
  bool verify_reads = true;     // Files read from start to end are checked (-o noverify).
  uint32_t spin_us = 200;       // Poll for the next request this long before sleeping; 0: libfuse's
                                // own loop.
  engine::ChainOptions chain;   // Its `locators` come from the three below.
  std::string clickhouse_config;             // -o clickhouse_config=FILE
  std::string backups_root;                  // -o backups_root=DIR
  std::map<std::string, std::string> disks;  // -o disk=NAME:DIR
  engine::S3Settings s3;  // -o s3_endpoint=, s3_region=, s3_profile=, s3_credentials=.
  // Store mounts only.
  bool share_inodes = false;        // Unchanged files keep one inode number across backups.
  uint32_t max_backups = 32;        // Opened backups kept while idle,
  uint32_t cache_mb = 256;          // and their memory in all.
  uint32_t manifest_cache_mb = 64;  // Parsed base manifests kept for sharing.
  std::vector<std::string> fuse_mount_options;  // Passed on to libfuse (fsname=, nodev, ...).
};

// Parses argv. kInvalidArgument for unknown options or a missing BACKUP/MOUNTPOINT.
engine::StatusOr<Options> ParseOptions(int argc, char** argv);

// The `-o` list libfuse gets: ro, fsname, subtype, allow_other, default_permissions, ...
std::string FuseMountOptions(const Options& o);

extern const char kUsage[];

}  // namespace stitchfs::fs
