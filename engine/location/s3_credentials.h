// S3Credentials: an access key, its secret and a session token, and where they came from. Held
// in memory only (never written to a file stitch makes, never shown).
#pragma once

#include <string>

namespace stitchfs::engine {

struct S3Credentials {
  std::string access_key, secret_key, session_token;
  std::string source;  // Where they came from, for messages ("environment", a file, a locator).
  bool present() const { return !access_key.empty() && !secret_key.empty(); }
};

}  // namespace stitchfs::engine
