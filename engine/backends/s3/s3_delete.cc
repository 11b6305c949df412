// S3Bucket::DeleteMany: S3's multi-object delete (DeleteObjects), with the per-key failures of
// its answer retried or reported.
#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include "engine/backends/s3/s3_bucket.h"
#include "engine/backends/s3/s3_xml.h"
#include "engine/base/md5.h"

namespace stitchfs::engine {
namespace {

// A key XML 1.0 carries as it is: valid UTF-8 without control characters (a CR would come
// back as LF, and another key would be deleted; most cannot be written at all).
bool XmlSafe(const std::string& key) {
  for (size_t i = 0; i < key.size();) {
    const auto u = static_cast<unsigned char>(key[i]);
    const size_t n = u < 0x80 ? 1 : (u >> 5) == 6 ? 2 : (u >> 4) == 14 ? 3 : (u >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > key.size() || u < 0x20 || u == 0x7f) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(key[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

std::string XmlEscaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// The per-key codes S3 documents as transient.
bool Retryable(const std::string& code) {
  return code == "InternalError" || code == "SlowDown" || code == "ServiceUnavailable" ||
         code == "RequestTimeout" || code == "OperationAborted";
}

}  // namespace

StatusOr<std::vector<S3Bucket::KeyError>> S3Bucket::DeleteBatch(
    const std::vector<std::string>& keys) const {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>";
  for (const std::string& k : keys) xml += "<Object><Key>" + XmlEscaped(k) + "</Key></Object>";
  xml += "</Delete>";
  const auto md5 = Md5(xml);
  S3Request req;
  req.method = "POST";
  req.query = {{"delete", ""}};
  req.body = xml;
  req.headers = {"Content-Type: application/xml", "Content-MD5: " + Base64(md5)};
  const std::string what = "DeleteObjects (" + std::to_string(keys.size()) + " keys)";
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status == 501 || XmlText(r.body, "Error/Code") == "NotImplemented") {
    return Status::NotSupported(what + " at " + client_->display());
  }
  if (r.status / 100 != 2) return ErrorFor(r, what);
  // A 200 may carry an error, or be cut: no proof that anything was deleted.
  if (r.body.find("<DeleteResult") == std::string::npos) {
    r.status = 500;
    return ErrorFor(r, what);
  }
  std::vector<KeyError> failed;
  KeyError current;
  RETURN_IF_ERROR(ParseS3Xml(r.body, [&](std::string_view path, std::string_view text) {
    if (path == "DeleteResult/Error/Key") current.key = text;
    if (path == "DeleteResult/Error/Code") current.code = text;
    if (path == "DeleteResult/Error/Message") current.message = text;
    if (path == "DeleteResult/Error") failed.push_back(std::exchange(current, {}));
  }));
  const std::set<std::string> asked(keys.begin(), keys.end());
  for (const KeyError& e : failed) {
    if (!asked.count(e.key)) {  // Retrying or ignoring it could be wrong either way.
      return Status::IOError(what + " at " + client_->display() + ": the answer names key " +
                                 EscapeForMessage(e.key) + ", which was not asked for",
                             EIO);
    }
  }
  return failed;
}

Status S3Bucket::DeleteWithRetries(std::vector<std::string> keys) const {
  int backoff = client_->config().first_backoff_ms;
  Status first;
  size_t failed = 0;
  for (int attempt = 1; !keys.empty(); ++attempt) {
    auto errors = DeleteBatch(keys);
    if (!errors.ok() && errors.status().code() == ErrorCode::kNotSupported) {
      for (const std::string& k : keys) RETURN_IF_ERROR(Delete(k));  // One by one, then.
      return first;
    }
    if (!errors.ok()) return errors.status();  // S3Client retried the request already.
    std::vector<std::string> again;
    for (const KeyError& e : *errors) {
      if (e.code == "NoSuchKey") continue;  // Gone already: what was wanted.
      if (Retryable(e.code) && attempt < client_->config().max_attempts) {
        again.push_back(e.key);
        continue;
      }
      ++failed;
      if (!first.ok()) continue;
      const std::string what = "DELETE " + EscapeForMessage(e.key) + " at " + client_->display() +
                               ": " + e.code + " (" + EscapeForMessage(e.message) + ")";
      first = e.code == "AccessDenied" ? Status::AccessDenied(what) : Status::IOError(what, EIO);
    }
    keys = std::move(again);
    if (!keys.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
      backoff = std::min(backoff * 2, 5000);
    }
  }
  if (failed > 1) return first.WithPrefix(std::to_string(failed) + " objects not deleted; first: ");
  return first;
}

Status S3Bucket::DeleteMany(const std::vector<std::string>& keys) const {
  Status first;
  std::vector<std::string> batch;
  auto flush = [&] {
    Status s = DeleteWithRetries(std::move(batch));
    batch.clear();
    if (first.ok()) first = s;
  };
  for (const std::string& k : keys) {
    if (!XmlSafe(k)) {
      Status s = Delete(k);
      if (first.ok()) first = s;
      continue;
    }
    batch.push_back(k);
    if (batch.size() == kMaxDeleteKeys) flush();
  }
  if (!batch.empty()) flush();
  return first;
}

}  // namespace stitchfs::engine
