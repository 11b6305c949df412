// Context: what the engine works with, built once by each entry point (a `stitch` command, the
// mount's main, a test) and passed down: where the backups are, the caches shared by all that
// the run opens, what base locators mean, and where long work shows its progress. The engine
// never makes a storage of its own: every call that reaches backups gets it from a Context.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/base/progress.h"
#include "engine/base/status.h"
#include "engine/location/locator.h"

namespace stitchfs::engine {

class BackupCache;
class ManifestCache;
class Storage;

// Thread-compatible (a plain struct; what it points to is thread-safe).
struct Context {
  // Where backups are read and written: a RoutingStorage for the front ends, any Storage for a
  // test. Required: a call given a Context without one fails with kInvalidArgument (or, where it
  // cannot return a Status, REQUIRES it).
  std::shared_ptr<const Storage> storage;
  // Parsed manifests and resolved indexes kept across runs (the front ends pass the per-user
  // one, ManifestCache::Default()); none if null.
  const ManifestCache* cache = nullptr;
  // Opened backups shared by the chains of a run (a store mount: a base opened once serves
  // every backup above it); none if null.
  std::shared_ptr<BackupCache> backups;
  // The backups root and disks that give base locators their meaning (--backups-root,
  // --clickhouse-config, --disk NAME=DIR).
  LocatorContext locators;
  // Where long work inside an engine call (prune's flattening) shows how far it has come;
  // nowhere if empty.
  ProgressSink progress;
  // Where a call reports what it left undone and why, without failing (prune's leftovers
  // held by a live writer); nowhere if empty.
  std::function<void(const std::string& warning)> warn;
};

// kInvalidArgument naming `what` if `ctx` has no storage; else OK.
inline Status RequireStorage(const Context& ctx, const std::string& what) {
  if (ctx.storage) return Status::OK();
  return Status::InvalidArgument(what + ": no storage given");
}

}  // namespace stitchfs::engine
