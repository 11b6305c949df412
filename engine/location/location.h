// Location: where a backup or a store is, as users, ClickHouse's locators and store listings
// spell it, read once: which backend serves it. This is the one place that decides that from the
// spelling (an `s3://` or HTTP(S) URL is object storage; a name ending in an archive extension,
// as ClickHouse decides it, is an archive; anything else is a folder of this machine); the
// router (engine/backends/routing_storage.h) serves each location by it, and the rest of the
// engine asks a Location rather than look at the text. A backend parses the details of its own
// kind (an S3 address: s3_address.h).
#pragma once

#include <string>
#include <string_view>

#include "engine/location/archive_kind.h"

namespace stitchfs::engine {

enum class Backend {
  kLocal,  // A folder of this machine.
  kS3,     // S3-compatible object storage.
};

struct Location {
  Backend backend = Backend::kLocal;
  // Set if the location names an archive file (in a folder of this machine or an object)
  // rather than a backup folder.
  ArchiveKind archive;

  bool in_object_storage() const { return backend == Backend::kS3; }
  bool is_archive() const { return archive.is_archive(); }
};

// What `text` names (never fails: whether an S3 address is well formed is its backend's to say).
Location LocationOf(std::string_view text);

}  // namespace stitchfs::engine
