// S3Address: where a backup or a store lives in S3-compatible object storage, parsed from what
// users and ClickHouse write: `s3://BUCKET/PREFIX` (endpoint from the configuration), or an
// HTTP(S) URL in path style (`http://host:port/BUCKET/PREFIX`) or virtual-hosted style
// (`https://BUCKET.s3.REGION.amazonaws.com/PREFIX`), as ClickHouse's `S3('url', ...)` takes.
#pragma once

#include <string>
#include <string_view>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct S3Address {
  // "scheme://host[:port]" without the bucket for path style; the host that carries the bucket
  // for virtual-hosted style; empty for `s3://` (the configured endpoint).
  std::string endpoint;
  std::string bucket;
  std::string key;  // The prefix: no leading or trailing slash, percent-decoded; may be empty.
  bool virtual_hosted = false;
  std::string region;  // From an amazonaws.com host name; else empty.

  // The one spelling of this address: `s3://BUCKET/KEY`, or `ENDPOINT/BUCKET/KEY` (path
  // style), or `https://BUCKET.HOST/KEY` (virtual-hosted): never credentials or a query.
  std::string Location() const;
  // The address of `name` inside this one (KEY + "/" + name).
  S3Address Child(std::string_view name) const;
  // The object key of file `name` of the backup here: KEY + "/" + name (name alone if the
  // key is empty), as ClickHouse's getS3BackupObjectKey makes it.
  std::string ObjectKey(std::string_view name) const;
};

// True if `location` names object storage (`s3://`, `http://`, `https://`).
bool IsS3Location(std::string_view location);

// `s` with its %XX escapes decoded (and '+' as a space with `plus_is_space`, as S3 lists keys
// with encoding-type=url); kInvalidArgument for a bad escape.
StatusOr<std::string> PercentDecode(std::string_view s, bool plus_is_space = false);

// `url` without a "user:password@" before its host: what messages may show of it.
std::string WithoutUserinfo(std::string_view url);

// Parses `location`. Userinfo and a query string (credentials of a presigned URL) are dropped.
// kInvalidArgument (no bucket, bad percent-encoding, a key with `.` or `..` components).
StatusOr<S3Address> ParseS3Address(std::string_view location);

// `text` percent-encoded as SigV4 wants it: unreserved characters kept, `/` kept if
// `keep_slash`, everything else as %XX (upper case).
std::string UriEncode(std::string_view text, bool keep_slash);

}  // namespace stitchfs::engine
