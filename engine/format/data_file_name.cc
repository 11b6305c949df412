#include "engine/format/data_file_name.h"

#include <cctype>

#include "engine/location/s3_address.h"

namespace stitchfs::engine {

std::string DataFileNameFor(std::string_view name) {
  if (name.empty() || name[0] != '.') return std::string(name);
  return std::string(kStitchDir) + "/data/" + std::string(name);
}

std::string ObjectBucketUrl(std::string_view endpoint, std::string_view ns) {
  std::string url = StripUrlCredentials(endpoint);
  while (!url.empty() && url.back() == '/') url.pop_back();
  const size_t host = url.find("://");
  const std::string_view rest =
      host == std::string::npos ? std::string_view(url) : std::string_view(url).substr(host + 3);
  const bool virtual_hosted = !ns.empty() && rest.starts_with(std::string(ns) + ".");
  if (!ns.empty() && !virtual_hosted) url += "/" + std::string(ns);
  return url;
}

std::string ObjectDataFileName(std::string_view bucket_url, std::string_view key) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(kObjectDataPrefix);
  for (unsigned char c : bucket_url) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  while (!key.empty() && key.front() == '/') key.remove_prefix(1);
  return out + "/" + std::string(key);
}

std::optional<ObjectRef> ParseObjectDataFileName(std::string_view data_file) {
  if (!data_file.starts_with(kObjectDataPrefix)) return std::nullopt;
  data_file.remove_prefix(kObjectDataPrefix.size());
  const size_t slash = data_file.find('/');
  if (slash == std::string_view::npos || slash % 2 != 0) return std::nullopt;
  ObjectRef ref;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < slash; i += 2) {
    const char a = data_file[i], b = data_file[i + 1];
    if (!std::isxdigit(static_cast<unsigned char>(a)) ||
        !std::isxdigit(static_cast<unsigned char>(b)) || std::isupper(a) || std::isupper(b)) {
      return std::nullopt;
    }
    ref.bucket_url.push_back(static_cast<char>(nibble(a) * 16 + nibble(b)));
  }
  ref.key = std::string(data_file.substr(slash + 1));
  return ref;
}

}  // namespace stitchfs::engine
