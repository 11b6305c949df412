// Base-backup locators: the `<base_backup>` text (ClickHouse's `File('...')`,
// `Disk('name', 'path')`, `S3('url')`, ...) parsed, shown without secrets, written, and the
// server setup that gives them their meaning (LocatorContext).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct Locator {
  std::string engine;             // "File", "Disk", "S3", ...
  std::vector<std::string> args;  // Unquoted argument values.
};

// What a ClickHouse server knows that its locators leave out (FORMAT.md §5.1): the backups
// root that relative `File()` paths are relative to (its first `backups.allowed_path`), and
// the folders of its disks. Empty when unknown.
struct LocatorContext {
  std::string backups_root;                  // Absolute and normal, or "".
  std::map<std::string, std::string> disks;  // Disk name -> folder (absolute and normal).
  std::string origin;  // Where they came from, for messages: "--backups-root", a config file.
};

// Parses `Engine('a', 'b')`: an identifier, then SQL literals (single-quoted strings with
// backslash escapes, or bare words) separated by commas. kInvalidArgument if malformed, the
// text shown as RedactUnparsable shows it (a locator that does not parse may hold a secret).
StatusOr<Locator> ParseLocator(std::string_view text);

// A locator that does not parse, fit to show: its engine name and "(...)", nothing else.
std::string RedactUnparsable(std::string_view text);

// True if `arg` is written as a locator (`File(...)`, `Disk(...)`, `S3(...)`) rather than a
// path or URL: what a user may give wherever a backup is named.
bool LooksLikeLocator(std::string_view arg);

// `text` fit to show: S3 credentials replaced by '[HIDDEN]', the URL in its one spelling
// (userinfo, query and fragment dropped); engines other than File, Disk and S3('url'[, 'key',
// 'secret']) and text that does not parse shown as `Engine(...)`.
std::string RedactLocator(std::string_view text);

// `text` without credentials, as newer ClickHouse writes a locator: `S3('url', 'key',
// 'secret')` becomes `S3('url')`, the URL's userinfo, query and fragment go; File and Disk
// locators, a clean `S3('url')` and "" (no base) are returned byte for byte; any other engine (a
// named collection, AzureBlobStorage, ...) and text that does not parse become `Engine(...)`. It
// names the same base: FindBaseCandidates gives the same places for both (the credentials
// only go to S3Keyring). What an index or a cache keeps of a locator.
std::string StripLocatorCredentials(std::string_view text);

// True if StripLocatorCredentials changes `text` (it holds, or may hold, a credential).
bool LocatorHasCredentials(std::string_view text);

// The one spelling of a location: an S3 address's Location(), else AbsolutePath.
std::string NormalLocation(const std::string& location);

// Renders `File('<path>')`, `Disk('<disk>', '<path>')` with quotes and backslashes escaped.
std::string FileLocator(std::string_view path);
std::string DiskLocator(std::string_view disk, std::string_view path);

// `p` as a path inside a disk: relative and normal whatever its spelling ("/b", "./b", "b/",
// "." -> ""); kInsecurePath if it climbs above the disk.
StatusOr<std::string> PathInDisk(std::string_view p);

// The location an `S3('url'[, 'key', 'secret'])` locator (`text`, parsed as `loc`) names,
// its URL read as ClickHouse reads it (ParseS3LocatorUrl); credentials are kept in S3Keyring
// for that bucket, never in the location. kNotSupported for other forms (argument counts, a
// named collection); the address's errors. Messages show `text` through RedactLocator.
StatusOr<std::string> S3LocatorLocation(const Locator& loc, std::string_view text);

// A location as a user gives it (a command's argument, --base, a mount's source): a locator
// (LooksLikeLocator) resolved by ResolveUserLocator; an S3 address parsed by ParseS3Address
// (refusing credentials, a query, a fragment, needless escapes) in its one spelling; else a
// path made absolute. kInvalidArgument, and the errors of ResolveUserLocator.
StatusOr<std::string> ResolveUserLocation(const std::string& arg, const LocatorContext& context);

// A location a user named as a locator, as ClickHouse's server would take it: `File('/abs')`,
// `File('rel')` under the context's backups root, `Disk('n', 'p')` in a known disk,
// `S3('url'[, 'key', 'secret'])` (credentials kept in S3Keyring, never in the location; a URL
// with userinfo or a query refused). In its one spelling (NormalLocation). kInvalidArgument
// when the context lacks what the locator needs (no backups root, an unknown disk) or the URL
// carries credentials, kInsecurePath, kNotSupported (other engines).
StatusOr<std::string> ResolveUserLocator(std::string_view text, const LocatorContext& context);

}  // namespace stitchfs::engine
