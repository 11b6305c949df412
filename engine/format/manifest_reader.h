// ManifestReader: parses a `.backup` manifest (ClickHouse's G1 pretty-printed or G2 compact
// format, plus stitchfs's header extension) into a Manifest, streaming, with expat.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/base/random_access_file.h"
#include "engine/base/status_or.h"
#include "engine/format/manifest.h"

namespace stitchfs::engine {

// Reads the manifest from `fd` until EOF. `backup_name` (the backup's path) goes in every
// message. Errors: kBackupDamaged (malformed XML, missing or bad tag, base_size > size, bad
// checksum length, missing or second <contents>, element inside a leaf; with line:column),
// kInsecurePath (unsafe name or data_file), kVersionNotSupported (version outside [1, 2], or an
// unknown checksum algorithm), kNotSupported (lightweight-snapshot entries with <object_key>),
// kIOError (read failed).
StatusOr<std::unique_ptr<const Manifest>> ReadManifestFd(int fd, const std::string& backup_name,
                                                         uint64_t size_hint = 0);

// Reads only the header (everything before <contents>): what listing a store of many backups
// needs. The same header errors as ReadManifestFd; entries are not looked at.
StatusOr<ManifestHeader> ReadManifestHeaderFd(int fd, const std::string& backup_name);

// The same over a positional reader (a manifest from any Storage).
StatusOr<std::unique_ptr<const Manifest>> ReadManifest(const RandomAccessFile& file,
                                                       const std::string& backup_name);
StatusOr<ManifestHeader> ReadManifestHeader(const RandomAccessFile& file,
                                            const std::string& backup_name);

// The same over an in-memory document.
StatusOr<std::unique_ptr<const Manifest>> ParseManifest(std::string_view xml,
                                                        const std::string& backup_name);

}  // namespace stitchfs::engine
