// S3Config: the endpoint, region and credentials for object storage, found as the AWS tools
// find them: mount options first, then AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION /
// AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, then the
// shared files (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, AWS_CONFIG_FILE or
// ~/.aws/config) under profile AWS_PROFILE or "default". A secret is never put in a message.
#pragma once

#include <functional>
#include <string>

#include "engine/base/status_or.h"
#include "engine/location/s3_credentials.h"

namespace stitchfs::engine {

// What a user may set outside the environment (stitchfs mount options, stitch flags).
struct S3Settings {
  std::string endpoint;          // -o s3_endpoint=URL
  std::string region;            // -o s3_region=R
  std::string profile;           // -o s3_profile=NAME
  std::string credentials_file;  // -o s3_credentials=FILE (the ~/.aws/credentials format)
  int64_t cache_mb = -1;         // -o s3_cache_mb=N: the block cache's size; -1: the default.
};

struct S3Config {
  std::string endpoint;  // For `s3://` addresses; empty: AWS (https://s3.REGION.amazonaws.com).
  std::string region;    // Empty: us-east-1, or the region an AWS host name carries.
  S3Credentials credentials;   // Absent: requests go unsigned (public buckets).
  int max_attempts = 6;        // STITCH_S3_MAX_ATTEMPTS: tries per request, >= 1.
  int first_backoff_ms = 200;  // Doubling per retry, with jitter, up to 5 s.
  int connect_timeout_ms = 5000;
  int stall_timeout_s = 30;  // A transfer with no progress for this long is retried.
  // The on-disk block cache (BlockCache): STITCH_S3_CACHE_MB or -o s3_cache_mb (default
  // 1024; 0 turns it off), in DefaultCacheDir()/s3-blocks.
  uint64_t block_cache_bytes = uint64_t{1024} << 20;
  std::string block_cache_dir;
};

using EnvLookup = std::function<const char*(const char*)>;

// The configuration from `settings`, the environment (`env`, getenv by default) and the
// shared files. kInvalidArgument for a credentials file named in `settings` that cannot be
// read or lacks the profile, an endpoint with userinfo or a query (CheckNoUrlCredentials:
// refused, never silently ignored; the message names where it came from and where
// credentials belong, never the secret), or a bad STITCH_S3_MAX_ATTEMPTS. No credentials anywhere
// is not an error: requests then go unsigned, and a server that wants them answers ACCESS_DENIED.
StatusOr<S3Config> LoadS3Config(const S3Settings& settings, const EnvLookup& env = {});

}  // namespace stitchfs::engine
