#include "engine/location/s3_address.h"

#include <algorithm>
#include <cctype>

namespace stitchfs::engine {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The key without leading and trailing slashes; kInvalidArgument for "." or ".." components,
// empty components or NUL (a prefix must name one place only).
StatusOr<std::string> CleanKey(std::string_view raw) {
  ASSIGN_OR_RETURN(std::string key, PercentDecode(raw));
  while (!key.empty() && key.front() == '/') key.erase(0, 1);
  while (!key.empty() && key.back() == '/') key.pop_back();
  size_t start = 0;
  while (!key.empty() && start <= key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string::npos) end = key.size();
    std::string_view part(key.data() + start, end - start);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != part.npos) {
      return Status::InvalidArgument("S3 key prefix \"" + EscapeForMessage(key) +
                                     "\" has an empty, \".\" or \"..\" component");
    }
    start = end + 1;
  }
  return key;
}

// The region of an AWS host: "s3.R.amazonaws.com", "s3-R.amazonaws.com", "B.s3.R.amazonaws.com".
std::string RegionOf(std::string_view host) {
  const size_t aws = host.find(".amazonaws.com");
  if (aws == host.npos) return "";
  size_t s3 = host.rfind("s3", aws);
  if (s3 == host.npos || (s3 > 0 && host[s3 - 1] != '.')) return "";
  std::string_view rest = host.substr(s3 + 2, aws - s3 - 2);  // ".R" or "-R" or "".
  if (rest.empty()) return "";
  rest.remove_prefix(1);
  if (StartsWith(rest, "dualstack.")) rest.remove_prefix(10);
  return std::string(rest);
}

// Virtual-hosted when the host is BUCKET.s3..., BUCKET.s3-..., as S3 and its clones name them.
size_t VirtualBucketEnd(std::string_view host) {
  for (std::string_view mark : {".s3.", ".s3-", ".cos.", ".obs.", ".oss-", ".eos."}) {
    const size_t at = host.find(mark);
    if (at != host.npos && at > 0) return at;
  }
  return host.npos;
}

}  // namespace

StatusOr<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(plus_is_space && s[i] == '+' ? ' ' : s[i]);
      continue;
    }
    if (i + 2 >= s.size() || HexValue(s[i + 1]) < 0 || HexValue(s[i + 2]) < 0) {
      return Status::InvalidArgument("bad percent-encoding");
    }
    out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
    i += 2;
  }
  return out;
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

bool IsS3Location(std::string_view location) {
  return StartsWith(location, "s3://") || StartsWith(location, "http://") ||
         StartsWith(location, "https://");
}

std::string S3Address::Location() const {
  const std::string tail = key.empty() ? "" : "/" + UriEncode(key, true);
  if (endpoint.empty()) return "s3://" + bucket + tail;
  if (virtual_hosted) return endpoint + tail;
  return endpoint + "/" + bucket + tail;
}

S3Address S3Address::Child(std::string_view name) const {
  S3Address child = *this;
  child.key = ObjectKey(name);
  return child;
}

std::string S3Address::ObjectKey(std::string_view name) const {
  return key.empty() ? std::string(name) : key + "/" + std::string(name);
}

std::string WithoutUserinfo(std::string_view url) {
  std::string out(url);
  const size_t scheme = out.find("://");
  const size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t at = out.find('@', host), end = out.find('/', host);
  if (at != std::string::npos && (end == std::string::npos || at < end)) {
    out.erase(host, at + 1 - host);
  }
  return out;
}

namespace {

// The parts of a URL as far as credentials go: [host, authority_end) is what comes before the
// path ("KEY:SECRET@host:port", the bucket of s3://); `userinfo_end` is one past the '@' that
// ends userinfo, or npos; `query` is where '?' or '#' starts, or the size.
struct UrlParts {
  size_t host = 0, authority_end = 0, userinfo_end = std::string_view::npos, query = 0;
  bool suspicious = false;  // Userinfo, or an authority only credentials explain.
};

// A port of digits (or none); an IPv6 literal in brackets before it.
bool PlainHostPort(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == authority.npos) return false;
    authority.remove_prefix(close + 1);
    if (authority.empty()) return true;
    if (authority.front() != ':') return false;
  }
  const size_t colon = authority.find(':');
  if (colon == authority.npos) return true;
  const std::string_view port = authority.substr(colon + 1);
  return !port.empty() && port.find_first_not_of("0123456789") == port.npos;
}

UrlParts PartsOf(std::string_view url) {
  UrlParts p;
  const size_t scheme = url.find("://");
  p.host = scheme == url.npos ? 0 : scheme + 3;
  p.query = std::min(url.find_first_of("?#", p.host), url.size());
  p.authority_end = std::min(url.find_first_of("/?#", p.host), url.size());
  const std::string_view authority = url.substr(p.host, p.authority_end - p.host);
  // An AWS secret may hold '/', which ends the authority early: "s3://KEY:SEC/RET@bucket" has
  // the authority "KEY:SEC". A ':' in a bucket or a port that is not a number is only
  // explained by credentials; the '@' that ends them is then the last one before the query.
  const bool s3_scheme = StartsWith(url, "s3://");
  p.suspicious = authority.find('@') != authority.npos ||
                 (s3_scheme ? authority.find(':') != authority.npos : !PlainHostPort(authority));
  if (p.suspicious) {
    const size_t at = url.substr(0, p.query).rfind('@');
    if (at != url.npos && at >= p.host) {
      p.userinfo_end = at + 1;
      p.authority_end = std::max(p.authority_end, std::min(url.find('/', at), p.query));
    }
  }
  return p;
}

// True if each %XX of `url` from `from` on stands for a character that needs escaping; else
// false, with that character in `*plain`.
bool OnlyNeededEscapes(std::string_view url, size_t from, char* plain) {
  for (size_t i = from; i + 2 < url.size(); ++i) {
    if (url[i] != '%') continue;
    const int hi = HexValue(url[i + 1]), lo = HexValue(url[i + 2]);
    if (hi < 0 || lo < 0) continue;  // PercentDecode refuses it.
    const char c = static_cast<char>(hi * 16 + lo);
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
        c == '~' || c == '/') {
      *plain = c;
      return false;
    }
  }
  return true;
}

// Parses `location`, which has no userinfo, query or fragment; `shown` is how messages show it.
StatusOr<S3Address> ParseClean(std::string_view rest, const std::string& shown) {
  S3Address a;
  if (StartsWith(rest, "s3://")) {
    rest.remove_prefix(5);
    a.bucket = std::string(rest.substr(0, rest.find('/')));
    rest.remove_prefix(a.bucket.size());
  } else if (StartsWith(rest, "http://") || StartsWith(rest, "https://")) {
    const size_t scheme_end = rest.find("://") + 3;
    const std::string_view scheme = rest.substr(0, scheme_end);
    rest.remove_prefix(scheme_end);
    std::string_view host = rest.substr(0, rest.find('/'));
    rest.remove_prefix(host.size());
    if (host.empty()) return Status::InvalidArgument("S3 address " + shown + " has no host");
    if (host.find('@') != host.npos || !PlainHostPort(host)) {
      return Status::InvalidArgument("S3 address " + shown + " has a bad host or port");
    }
    a.region = RegionOf(host);
    if (const size_t end = VirtualBucketEnd(host); end != host.npos) {
      a.virtual_hosted = true;
      a.bucket = std::string(host.substr(0, end));
      a.endpoint = std::string(scheme) + std::string(host);
    } else {
      a.endpoint = std::string(scheme) + std::string(host);
      if (!rest.empty()) rest.remove_prefix(1);
      a.bucket = std::string(rest.substr(0, rest.find('/')));
      rest.remove_prefix(a.bucket.size());
    }
  } else {
    return Status::InvalidArgument("not an S3 address: " + shown);
  }
  if (a.bucket.empty() || a.bucket.find_first_of("%:@") != a.bucket.npos) {
    return Status::InvalidArgument("S3 address " + shown + " names no bucket");
  }
  ASSIGN_OR_RETURN(a.key, CleanKey(rest));
  return a;
}

}  // namespace

const char kWhereCredentialsGo[] =
    "S3 credentials belong in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
    "AWS_SESSION_TOKEN), in the AWS shared credentials file (~/.aws/credentials or "
    "AWS_SHARED_CREDENTIALS_FILE) under a profile (AWS_PROFILE), or for a mount in "
    "-o s3_credentials=FILE; never in a URL, which ps, messages and base locators show";

std::string RedactUrl(std::string_view url) {
  const UrlParts p = PartsOf(url);
  std::string out(url.substr(0, p.host));
  if (p.userinfo_end != url.npos) {
    out += "[HIDDEN]@";
    out += url.substr(p.userinfo_end, p.query - p.userinfo_end);
  } else if (p.suspicious) {
    out += "[HIDDEN]";
    out += url.substr(p.authority_end, p.query - p.authority_end);
  } else {
    out += url.substr(p.host, p.query - p.host);
  }
  const size_t hash = url.find('#', p.query);
  if (p.query < url.size() && url[p.query] == '?') out += "?[HIDDEN]";
  if (hash != url.npos) out += "#[HIDDEN]";
  return EscapeForMessage(out);
}

Status CheckNoUrlCredentials(std::string_view url, std::string_view what) {
  const UrlParts p = PartsOf(url);
  const std::string shown = std::string(what) + " " + RedactUrl(url);
  if (p.suspicious) {
    return Status::InvalidArgument(shown +
                                   " carries credentials (KEY:SECRET@): " + kWhereCredentialsGo);
  }
  if (p.query < url.size() && url[p.query] == '?') {
    return Status::InvalidArgument(
        shown +
        " has a query string: an S3 address names a bucket and a prefix only (write a '?' "
        "of a key as %3F), and a presigned URL's query is a credential: " +
        kWhereCredentialsGo);
  }
  return Status::OK();
}

std::string StripUrlCredentials(std::string_view url) {
  const UrlParts p = PartsOf(url);
  std::string out(url.substr(0, p.host));
  const size_t from = p.userinfo_end != url.npos ? p.userinfo_end : p.host;
  out += url.substr(from, p.query - from);
  return out;
}

StatusOr<S3Address> ParseS3Address(std::string_view location) {
  RETURN_IF_ERROR(CheckNoUrlCredentials(location, "S3 address"));
  const std::string shown = RedactUrl(location);
  if (location.find('#') != location.npos) {
    return Status::InvalidArgument("S3 address " + shown +
                                   " has a fragment (#...), which is never sent to the server: "
                                   "write a '#' of a key as %23");
  }
  char plain = 0;
  if (!OnlyNeededEscapes(location, PartsOf(location).authority_end, &plain)) {
    return Status::InvalidArgument(
        "S3 address " + shown + " escapes '" + std::string(1, plain) +
        "', which needs no escaping: stitch decodes %XX as in any URL (and as ClickHouse "
        "does), while `aws s3` takes it literally, so it is refused rather than guessed; write '" +
        std::string(1, plain) + "' itself, or a '%' of a key as %25");
  }
  return ParseClean(location, shown);
}

StatusOr<S3Address> ParseS3LocatorUrl(std::string_view url) {
  return ParseClean(StripUrlCredentials(url), RedactUrl(url));
}

}  // namespace stitchfs::engine
