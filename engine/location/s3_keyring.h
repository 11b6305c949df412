// S3Keyring: credentials that came with a backup locator (ClickHouse's
// `S3('url', 'key', 'secret')`), kept in memory for the buckets they name, so that opening that
// base, and a base beside it (`<base_backup_copy_s3_credentials_from_backup>`: "use this
// backup's credentials"), signs with them instead of the configured ones.
#pragma once

#include <optional>
#include <string>

#include "engine/location/s3_address.h"
#include "engine/location/s3_credentials.h"

namespace stitchfs::engine {

// Thread-safe. One per process (Global()): locators are resolved far from any storage.
class S3Keyring {
 public:
  static S3Keyring& Global();

  // Remembers `credentials` for `address`'s bucket (and, as a fallback, its endpoint).
  void Remember(const S3Address& address, const S3Credentials& credentials);
  // The credentials remembered for `address`'s bucket, else for its endpoint, else nullopt.
  std::optional<S3Credentials> Find(const S3Address& address) const;
};

}  // namespace stitchfs::engine
