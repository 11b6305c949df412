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

// `url` without a "user:password@" before its host.
std::string WithoutUserinfo(std::string_view url);

// `url` fit for a message: userinfo shown as "[HIDDEN]@", a query as "?[HIDDEN]", a fragment
// as "#[HIDDEN]", control characters escaped. Never fails (any text is shown so).
std::string RedactUrl(std::string_view url);

// Where S3 credentials belong, for messages that refuse them elsewhere.
extern const char kWhereCredentialsGo[];

// OK unless `url` carries what must never be in an address, because an address is shown in
// `ps`, in messages and in the base locators stitch writes: userinfo ("KEY:SECRET@", in any
// scheme, `s3://` included) or a query (a presigned URL's signature). kInvalidArgument naming
// the URL through RedactUrl and where credentials belong; `what` names it ("S3 address",
// "the S3 endpoint from AWS_ENDPOINT_URL").
Status CheckNoUrlCredentials(std::string_view url, std::string_view what);

// Parses `location` as a user or stitch writes it. Refused (kInvalidArgument, the URL shown
// through RedactUrl): userinfo and a query (CheckNoUrlCredentials); a fragment (never sent to a
// server: write '#' as %23); a %XX escape of a character that needs none (a letter, a digit,
// - . _ ~ or /: `aws s3` would take "%41" as three characters of the key, a URL as "A", so it
// is refused rather than guessed); no bucket, bad percent-encoding, a key with `.`, `..` or
// empty components. Every other %XX is decoded: an address is a URL, as ClickHouse reads it,
// and Location() writes exactly the escapes this accepts.
StatusOr<S3Address> ParseS3Address(std::string_view location);

// Parses the URL of a ClickHouse `S3('url', ...)` locator as ClickHouse takes it: userinfo, a
// query and a fragment dropped (as newer ClickHouse strips them before writing a locator;
// they never name another bucket or key), every %XX decoded. kInvalidArgument as above
// otherwise.
StatusOr<S3Address> ParseS3LocatorUrl(std::string_view url);

// `url` without userinfo, query and fragment: what ParseS3LocatorUrl reads of it.
std::string StripUrlCredentials(std::string_view url);

// `text` percent-encoded as SigV4 wants it: unreserved characters kept, `/` kept if
// `keep_slash`, everything else as %XX (upper case).
std::string UriEncode(std::string_view text, bool keep_slash);

}  // namespace stitchfs::engine
