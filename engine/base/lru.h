// Lru: the one least-recently-used map of the engine (open fds, cached blocks, decoded archive
// chunks, parsed manifests, a mount's open backups). Each entry has a weight (1, or its bytes);
// Trim removes the least recently used entries while the map is over its limits, skipping
// those the caller says are in use. Not thread-safe: its owner holds its own lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <list>
#include <unordered_map>
#include <utility>

namespace stitchfs::engine {

// What Trim keeps an Lru within.
struct LruLimits {
  size_t max_entries = std::numeric_limits<size_t>::max();
  uint64_t max_weight = std::numeric_limits<uint64_t>::max();
  // Never fewer entries than this (a cache that must keep what it was just given).
  size_t min_entries = 0;
};

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class Lru {
 public:
  // The value of `key`, now the most recently used; nullptr if there is none.
  Value* Get(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->value;
  }
  // The value of `key` without changing the order; nullptr if there is none.
  const Value* Peek(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->value;
  }
  Value* Peek(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->value;
  }
  // Sets `key` to `value` weighing `weight`, now the most recently used (replacing any value).
  Value& Put(const Key& key, Value value, uint64_t weight = 1) {
    Erase(key);
    order_.push_front(Node{key, std::move(value), weight});
    index_.emplace(key, order_.begin());
    weight_ += weight;
    return order_.front().value;
  }
  // Removes `key`; false if there was none.
  bool Erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    weight_ -= it->second->weight;
    order_.erase(it->second);
    index_.erase(it);
    return true;
  }
  // Removes least recently used entries, oldest first, while over `limits`, skipping those for
  // which `in_use(key, value)` is true; each removed entry is passed to `evicted(key, value)`
  // (after it left the map). Returns how many were removed.
  template <typename InUse, typename Evicted>
  size_t Trim(const LruLimits& limits, InUse in_use, Evicted evicted) {
    size_t removed = 0;
    auto it = order_.end();
    while (it != order_.begin() && Over(limits)) {
      --it;
      if (in_use(std::as_const(it->key), std::as_const(it->value))) continue;
      Node node = std::move(*it);
      index_.erase(node.key);
      weight_ -= node.weight;
      it = order_.erase(it);
      ++removed;
      evicted(node.key, node.value);
    }
    return removed;
  }
  size_t Trim(const LruLimits& limits) {
    return Trim(
        limits, [](const Key&, const Value&) { return false; }, [](const Key&, const Value&) {});
  }
  void Clear() {
    order_.clear();
    index_.clear();
    weight_ = 0;
  }

  size_t size() const { return order_.size(); }
  uint64_t weight() const { return weight_; }
  // Visits every entry, most recently used first.
  template <typename Fn>
  void ForEach(Fn fn) const {
    for (const Node& n : order_) fn(n.key, n.value);
  }

 private:
  struct Node {
    Key key;
    Value value;
    uint64_t weight;
  };
  bool Over(const LruLimits& l) const {
    return order_.size() > l.min_entries &&
           (order_.size() > l.max_entries || weight_ > l.max_weight);
  }

  std::list<Node> order_;  // Most recently used first.
  std::unordered_map<Key, typename std::list<Node>::iterator, Hash> index_;
  uint64_t weight_ = 0;
};

}  // namespace stitchfs::engine
