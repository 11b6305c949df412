#include "engine/backends/s3/s3_generation_lock.h"

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace stitchfs::engine {
namespace {

std::string GenerationKey(const std::string& key, int generation) {
  return generation == 0 ? key : key + "." + std::to_string(generation);
}

}  // namespace

int LockGenerationOf(const std::string& object, const std::string& key) {
  if (object == key) return 0;
  if (object.size() <= key.size() + 1 || object.compare(0, key.size(), key) != 0 ||
      object[key.size()] != '.') {
    return -1;
  }
  const std::string digits = object.substr(key.size() + 1);
  if (digits.size() > 9 || digits.front() == '0' ||
      !std::all_of(digits.begin(), digits.end(),
                   [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return -1;
  }
  return std::stoi(digits);
}

StatusOr<std::vector<S3LockGeneration>> ListLockGenerations(const S3Bucket& bucket,
                                                            const std::string& key) {
  ASSIGN_OR_RETURN(S3Listing listing, bucket.List(key, ""));
  std::vector<S3LockGeneration> out;
  for (const S3Object& o : listing.objects) {
    const int g = LockGenerationOf(o.key, key);
    if (g >= 0) out.push_back({g, o.key, ""});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.generation < b.generation; });
  return out;
}

StatusOr<std::optional<S3LockGeneration>> CurrentLock(const S3Bucket& bucket,
                                                      const std::string& key) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    ASSIGN_OR_RETURN(auto all, ListLockGenerations(bucket, key));
    if (all.empty()) return std::optional<S3LockGeneration>();
    S3LockGeneration top = all.back();
    ASSIGN_OR_RETURN(auto text, bucket.GetAll(top.key, 1 << 16));
    if (!text) continue;  // Released between the listing and the read: look again.
    top.text = std::move(*text);
    return std::optional<S3LockGeneration>(std::move(top));
  }
  return Status::IOError("lock " + key + " keeps changing while read", EAGAIN);
}

StatusOr<bool> CreateLockGeneration(const S3Bucket& bucket, const std::string& key, int generation,
                                    const std::string& text, const std::string& taken_over) {
  const std::string k = GenerationKey(key, generation);
  ASSIGN_OR_RETURN(bool put, bucket.PutIf(k, text, ""));
  if (!put) {
    ASSIGN_OR_RETURN(auto now, bucket.GetAll(k, 1 << 16));
    if (!now || *now != text) return false;  // Another writer's (not ours, whose answer was lost).
  }
  if (generation == 0) return true;
  ASSIGN_OR_RETURN(auto below, bucket.GetAll(GenerationKey(key, generation - 1), 1 << 16));
  if (below && *below == taken_over) return true;
  RETURN_IF_ERROR(bucket.Delete(k));  // A holder came and went since the look: not ours to take.
  return false;
}

Status ReleaseLock(const S3Bucket& bucket, const std::string& key, int upto) {
  ASSIGN_OR_RETURN(auto all, ListLockGenerations(bucket, key));
  for (const S3LockGeneration& g : all) {
    if (g.generation <= upto) RETURN_IF_ERROR(bucket.Delete(g.key));
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
