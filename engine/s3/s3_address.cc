#include "engine/s3/s3_address.h"

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

StatusOr<S3Address> ParseS3Address(std::string_view location) {
  const std::string shown =
      EscapeForMessage(WithoutUserinfo(location.substr(0, location.find('?'))));
  S3Address a;
  std::string_view rest = location.substr(0, location.find_first_of("?#"));
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
    if (const size_t at = host.rfind('@'); at != host.npos) host.remove_prefix(at + 1);
    if (host.empty()) return Status::InvalidArgument("S3 address " + shown + " has no host");
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
  if (a.bucket.empty() || a.bucket.find('%') != a.bucket.npos) {
    return Status::InvalidArgument("S3 address " + shown + " names no bucket");
  }
  ASSIGN_OR_RETURN(a.key, CleanKey(rest));
  return a;
}

}  // namespace stitchfs::engine
