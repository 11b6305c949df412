#include "engine/storage/generation_lock.h"

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

StatusOr<std::vector<LockGeneration>> ListLockGenerations(const ObjectStore& store,
                                                          const std::string& key) {
  ASSIGN_OR_RETURN(std::vector<std::string> keys, store.ListKeys(key));
  std::vector<LockGeneration> out;
  for (std::string& k : keys) {
    const int g = LockGenerationOf(k, key);
    if (g >= 0) out.push_back({g, std::move(k), ""});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.generation < b.generation; });
  return out;
}

StatusOr<std::optional<LockGeneration>> CurrentLock(const ObjectStore& store,
                                                    const std::string& key) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    ASSIGN_OR_RETURN(auto all, ListLockGenerations(store, key));
    if (all.empty()) return std::optional<LockGeneration>();
    LockGeneration top = all.back();
    ASSIGN_OR_RETURN(auto text, store.Get(top.key, 1 << 16));
    if (!text) continue;  // Released between the listing and the read: look again.
    top.text = std::move(*text);
    return std::optional<LockGeneration>(std::move(top));
  }
  return Status::IOError("lock " + key + " keeps changing while read", EAGAIN);
}

StatusOr<bool> CreateLockGeneration(const ObjectStore& store, const std::string& key,
                                    int generation, const std::string& text,
                                    const std::string& taken_over) {
  const std::string k = GenerationKey(key, generation);
  ASSIGN_OR_RETURN(bool put, store.CreateIfAbsent(k, text));
  if (!put) {
    ASSIGN_OR_RETURN(auto now, store.Get(k, 1 << 16));
    if (!now || *now != text) return false;  // Another writer's (not ours, whose answer was lost).
  }
  if (generation == 0) return true;
  ASSIGN_OR_RETURN(auto below, store.Get(GenerationKey(key, generation - 1), 1 << 16));
  if (below && *below == taken_over) return true;
  RETURN_IF_ERROR(store.Delete(k));  // A holder came and went since the look: not ours to take.
  return false;
}

Status ReleaseLock(const ObjectStore& store, const std::string& key, int upto) {
  ASSIGN_OR_RETURN(auto all, ListLockGenerations(store, key));
  for (const LockGeneration& g : all) {
    if (g.generation <= upto) RETURN_IF_ERROR(store.Delete(g.key));
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
