#include "engine/location/s3_keyring.h"

#include <map>
#include <mutex>

namespace stitchfs::engine {
namespace {

constexpr size_t kMaxKeys = 4096;
std::mutex mu;
std::map<std::string, S3Credentials>& Keys() {
  static auto* keys = new std::map<std::string, S3Credentials>();
  return *keys;
}

std::string BucketKey(const S3Address& bucket) { return bucket.Location(); }
std::string EndpointKey(const S3Address& a) {
  return a.virtual_hosted ? a.endpoint.substr(a.endpoint.find('.') + 1) : "@" + a.endpoint;
}

}  // namespace

S3Keyring& S3Keyring::Global() {
  static S3Keyring ring;
  return ring;
}

void S3Keyring::Remember(const S3Address& address, const S3Credentials& credentials) {
  std::lock_guard<std::mutex> lock(mu);
  if (Keys().size() >= kMaxKeys) Keys().clear();  // Bounded, whatever manifests name.
  S3Address bucket = address;
  bucket.key.clear();
  Keys()[BucketKey(bucket)] = credentials;
  Keys()[EndpointKey(address)] = credentials;
}

std::optional<S3Credentials> S3Keyring::Find(const S3Address& address) const {
  std::lock_guard<std::mutex> lock(mu);
  S3Address bucket = address;
  bucket.key.clear();
  for (const std::string& k : {BucketKey(bucket), EndpointKey(address)}) {
    auto it = Keys().find(k);
    if (it != Keys().end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace stitchfs::engine
