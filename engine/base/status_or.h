// StatusOr<T>: a T or the Status explaining why there is none.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "engine/base/status.h"

namespace stitchfs::engine {

// Holds either a value or a non-OK Status. Thread-compatible.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // REQUIRES: !status.ok().
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design.
    assert(!std::get<Status>(v_).ok());
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design.

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const& { return ok() ? Status::OK() : std::get<Status>(v_); }
  Status status() && { return ok() ? Status::OK() : std::move(std::get<Status>(v_)); }

  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace stitchfs::engine
