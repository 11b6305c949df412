#include "engine/backends/s3/s3_bucket.h"

#include "engine/backends/s3/s3_xml.h"
#include "engine/base/md5.h"

namespace stitchfs::engine {
namespace {

std::string Shown(const std::string& key) { return EscapeForMessage(key); }

}  // namespace

Status S3Bucket::ErrorFor(const S3Response& r, const std::string& what) const {
  const std::string code = client_->Redact(EscapeForMessage(XmlText(r.body, "Error/Code")));
  const std::string detail = "HTTP " + std::to_string(r.status) + (code.empty() ? "" : " " + code);
  const std::string where = what + " at " + client_->display();
  if (r.status == 403 || r.status == 401) {
    return Status::AccessDenied(where + ": the server refused the request (" + detail +
                                "); credentials from " + client_->credentials_source());
  }
  if (code == "NoSuchBucket") return Status::BackupNotFound(where + ": no such bucket");
  if (r.status == 404) return Status::BackupNotFound(where + ": no such object");
  if (r.status == 412) {
    return Status::BackupDamaged(where + ": the object was replaced while it was read");
  }
  return Status::IOError(where + ": " + detail, EIO);
}

StatusOr<S3Response> S3Bucket::Expect2xx(const S3Request& req, const std::string& what) const {
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status / 100 != 2) return ErrorFor(r, what);
  return r;
}

StatusOr<std::optional<S3Object>> S3Bucket::Head(const std::string& key,
                                                 const std::atomic<bool>* cancel) const {
  S3Request req;
  req.method = "HEAD";
  req.key = key;
  req.cancel = cancel;
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status == 404) {
    // A HEAD has no body: tell a missing bucket from a missing object by asking the bucket.
    S3Request bucket;
    bucket.method = "HEAD";
    ASSIGN_OR_RETURN(S3Response b, client_->Send(bucket));
    if (b.status == 404)
      return Status::BackupNotFound("HEAD " + Shown(key) + " at " + client_->display() +
                                    ": no such bucket");
    return std::optional<S3Object>();
  }
  if (r.status / 100 != 2) return ErrorFor(r, "HEAD " + Shown(key));
  return std::optional<S3Object>(S3Object{key, r.content_length.value_or(0), r.etag});
}

StatusOr<S3Range> S3Bucket::GetRange(const std::string& key, uint64_t offset, std::span<char> dst,
                                     const std::string& if_match, const SinkReport* report,
                                     const std::atomic<bool>* cancel) const {
  S3Request req;
  req.key = key;
  req.cancel = cancel;
  req.range_offset = offset;
  req.range_length = dst.size();
  req.sink = dst;
  req.report = report;
  if (!if_match.empty()) req.headers.push_back("If-Match: \"" + if_match + "\"");
  const std::string what = "GET " + Shown(key);
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status == 416) {  // The range starts at or past the end.
    return S3Range{0, r.total_size.value_or(offset), r.etag};
  }
  if (r.status / 100 != 2) return ErrorFor(r, what);
  if (r.status == 200 &&
      (offset > 0 || r.sink_overflow || r.content_length.value_or(0) > dst.size())) {
    return Status::IOError(what + " at " + client_->display() + ": the server ignored Range", EIO);
  }
  if (r.sink_overflow) {
    return Status::BackupDamaged(what + " at " + client_->display() + ": more bytes than asked");
  }
  if (r.status == 206 && r.range_start != offset) {
    return Status::IOError(what + " at " + client_->display() + ": the server sent another range",
                           EIO);
  }
  uint64_t total = r.total_size.value_or(0);
  if (r.status == 200) total = r.content_length.value_or(r.sink_bytes);  // Range ignored.
  const uint64_t want = offset >= total ? 0 : std::min<uint64_t>(dst.size(), total - offset);
  if (r.sink_bytes != want) {
    return Status::IOError(what + " at " + client_->display() + ": got " +
                               std::to_string(r.sink_bytes) + " of " + std::to_string(want) +
                               " bytes",
                           EIO);
  }
  return S3Range{r.sink_bytes, total, r.etag};
}

StatusOr<std::optional<std::string>> S3Bucket::GetAll(const std::string& key, uint64_t max_size,
                                                      std::string* etag) const {
  S3Request req;
  req.key = key;
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status == 404 && XmlText(r.body, "Error/Code") != "NoSuchBucket") {
    return std::optional<std::string>();
  }
  if (r.status / 100 != 2) return ErrorFor(r, "GET " + Shown(key));
  if (r.body.size() > max_size) {
    return Status::BackupDamaged("GET " + Shown(key) + " at " + client_->display() + ": " +
                                 std::to_string(r.body.size()) + " bytes, more than " +
                                 std::to_string(max_size));
  }
  if (r.content_length && *r.content_length != r.body.size()) {
    return Status::IOError("GET " + Shown(key) + ": short body", EIO);
  }
  if (etag) *etag = r.etag;
  return std::optional<std::string>(std::move(r.body));
}

namespace {

// The header by which the server checks that a body arrived as it was sent (else it answers
// BadDigest, which S3Client::Send sends again): a manifest or a data object changed on the way
// is never stored.
std::string ContentMd5(std::string_view body) { return "Content-MD5: " + Base64(Md5(body)); }

}  // namespace

Status S3Bucket::Put(const std::string& key, std::string_view body) const {
  S3Request req;
  req.method = "PUT";
  req.key = key;
  req.body = body;
  req.headers.push_back(ContentMd5(body));
  return Expect2xx(req, "PUT " + Shown(key)).status();
}

StatusOr<bool> S3Bucket::PutIf(const std::string& key, std::string_view body,
                               const std::string& etag) const {
  S3Request req;
  req.method = "PUT";
  req.key = key;
  req.body = body;
  req.headers.push_back(etag.empty() ? "If-None-Match: *" : "If-Match: \"" + etag + "\"");
  req.headers.push_back(ContentMd5(body));
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status == 412 || (etag.empty() && r.status == 409)) return false;
  if (r.status / 100 != 2) return ErrorFor(r, "PUT " + Shown(key));
  return true;
}

Status S3Bucket::Delete(const std::string& key) const {
  S3Request req;
  req.method = "DELETE";
  req.key = key;
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status / 100 == 2 || (r.status == 404 && XmlText(r.body, "Error/Code") != "NoSuchBucket")) {
    return Status::OK();
  }
  return ErrorFor(r, "DELETE " + Shown(key));
}

StatusOr<S3Listing> S3Bucket::List(const std::string& prefix, const std::string& delimiter) const {
  S3Listing out;
  std::string token;
  for (;;) {
    S3Request req;
    // Keys come percent-encoded: XML cannot carry every byte a key may hold (a CR would come
    // back as LF, a control character not at all), and a wrong key is a wrong delete.
    req.query = {
        {"list-type", "2"}, {"prefix", prefix}, {"max-keys", "1000"}, {"encoding-type", "url"}};
    if (!delimiter.empty()) req.query.push_back({"delimiter", delimiter});
    if (!token.empty()) req.query.push_back({"continuation-token", token});
    ASSIGN_OR_RETURN(S3Response r, Expect2xx(req, "LIST " + Shown(prefix)));
    std::string next;
    bool truncated = false, encoded = false;
    S3Object current;
    const size_t first_object = out.objects.size(), first_prefix = out.prefixes.size();
    RETURN_IF_ERROR(ParseS3Xml(r.body, [&](std::string_view path, std::string_view text) {
      if (path == "ListBucketResult/Contents/Key") current.key = text;
      if (path == "ListBucketResult/Contents/Size")
        current.size = std::strtoull(std::string(text).c_str(), nullptr, 10);
      if (path == "ListBucketResult/Contents/ETag") current.etag = std::string(text);
      if (path == "ListBucketResult/Contents") out.objects.push_back(std::exchange(current, {}));
      if (path == "ListBucketResult/CommonPrefixes/Prefix") out.prefixes.emplace_back(text);
      if (path == "ListBucketResult/IsTruncated") truncated = text == "true";
      if (path == "ListBucketResult/NextContinuationToken") next = text;
      if (path == "ListBucketResult/EncodingType") encoded = text == "url";
    }));
    if (encoded) {  // (A server that ignores encoding-type sends the keys as they are.)
      for (size_t i = first_object; i < out.objects.size(); ++i) {
        ASSIGN_OR_RETURN(out.objects[i].key, PercentDecode(out.objects[i].key, true));
      }
      for (size_t i = first_prefix; i < out.prefixes.size(); ++i) {
        ASSIGN_OR_RETURN(out.prefixes[i], PercentDecode(out.prefixes[i], true));
      }
    }
    if (!truncated) return out;
    if (next.empty() || next == token) {
      return Status::IOError("LIST " + Shown(prefix) + ": truncated without a token", EIO);
    }
    token = next;
  }
}

StatusOr<std::string> S3Bucket::CreateMultipart(const std::string& key) const {
  S3Request req;
  req.method = "POST";
  req.key = key;
  req.query = {{"uploads", ""}};
  req.headers.push_back("Content-Type: application/octet-stream");
  ASSIGN_OR_RETURN(S3Response r, Expect2xx(req, "CreateMultipartUpload " + Shown(key)));
  std::string id = XmlText(r.body, "InitiateMultipartUploadResult/UploadId");
  if (id.empty())
    return Status::IOError("CreateMultipartUpload " + Shown(key) + ": no UploadId", EIO);
  return id;
}

StatusOr<std::string> S3Bucket::UploadPart(const S3Upload& upload, int number,
                                           std::string_view body) const {
  S3Request req;
  req.method = "PUT";
  req.key = upload.key;
  req.query = {{"partNumber", std::to_string(number)}, {"uploadId", upload.upload_id}};
  req.body = body;
  req.headers.push_back(ContentMd5(body));
  ASSIGN_OR_RETURN(S3Response r, Expect2xx(req, "UploadPart " + Shown(upload.key)));
  if (r.etag.empty()) return Status::IOError("UploadPart " + Shown(upload.key) + ": no ETag", EIO);
  return r.etag;
}

bool S3Bucket::CanCopyFrom(const S3Bucket& source) const {
  return source.client().service() == client_->service();
}

StatusOr<std::string> S3Bucket::UploadPartCopy(const S3Upload& upload, int number,
                                               const S3Bucket& source,
                                               const std::string& source_key) const {
  S3Request req;
  req.method = "PUT";
  req.key = upload.key;
  req.query = {{"partNumber", std::to_string(number)}, {"uploadId", upload.upload_id}};
  req.headers.push_back("x-amz-copy-source: /" + source.name() + "/" + UriEncode(source_key, true));
  const std::string what = "UploadPartCopy " + Shown(upload.key) + " from " + Shown(source_key);
  ASSIGN_OR_RETURN(S3Response r, Expect2xx(req, what));
  if (!XmlText(r.body, "Error/Code").empty()) {  // A copy may fail after its 200.
    r.status = 500;
    return ErrorFor(r, what);
  }
  std::string etag = XmlText(r.body, "CopyPartResult/ETag");
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  if (etag.empty()) return Status::IOError(what + ": no ETag", EIO);
  return etag;
}

Status S3Bucket::CompleteMultipart(const S3Upload& upload, const std::vector<std::string>& etags,
                                   uint64_t size) const {
  std::string xml = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i) {
    xml += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>\"" + etags[i] +
           "\"</ETag></Part>";
  }
  xml += "</CompleteMultipartUpload>";
  S3Request req;
  req.method = "POST";
  req.key = upload.key;
  req.query = {{"uploadId", upload.upload_id}};
  req.body = xml;
  req.headers.push_back("Content-Type: application/xml");
  const std::string what = "CompleteMultipartUpload " + Shown(upload.key);
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status == 404 && XmlText(r.body, "Error/Code") == "NoSuchUpload") {
    // A retry after an answer that was lost, when the first try had completed the upload:
    // the object is there, of the parts' length and with a multipart ETag of as many parts.
    ASSIGN_OR_RETURN(auto made, Head(upload.key));
    const std::string suffix = "-" + std::to_string(etags.size());
    if (made && made->size == size && made->etag.size() > suffix.size() &&
        made->etag.compare(made->etag.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return Status::OK();
    }
  }
  if (r.status / 100 != 2) return ErrorFor(r, what);
  // A 200 may still carry an error (S3 reports late failures in the body); an answer without
  // its result (cut, or not XML) is no proof that the object was made.
  if (!XmlText(r.body, "Error/Code").empty() ||
      r.body.find("<CompleteMultipartUploadResult") == std::string::npos) {
    r.status = 500;
    return ErrorFor(r, what);
  }
  return Status::OK();
}

Status S3Bucket::AbortMultipart(const S3Upload& upload) const {
  S3Request req;
  req.method = "DELETE";
  req.key = upload.key;
  req.query = {{"uploadId", upload.upload_id}};
  ASSIGN_OR_RETURN(S3Response r, client_->Send(req));
  if (r.status / 100 == 2 || r.status == 404) return Status::OK();
  return ErrorFor(r, "AbortMultipartUpload " + Shown(upload.key));
}

StatusOr<std::vector<S3Upload>> S3Bucket::ListMultipart(const std::string& prefix) const {
  std::vector<S3Upload> out;
  std::string key_marker, id_marker;
  for (;;) {
    S3Request req;
    req.query = {{"uploads", ""}, {"prefix", prefix}};
    if (!key_marker.empty()) {
      req.query.push_back({"key-marker", key_marker});
      req.query.push_back({"upload-id-marker", id_marker});
    }
    ASSIGN_OR_RETURN(S3Response r, Expect2xx(req, "ListMultipartUploads " + Shown(prefix)));
    S3Upload current;
    bool truncated = false;
    std::string next_key, next_id;
    RETURN_IF_ERROR(ParseS3Xml(r.body, [&](std::string_view path, std::string_view text) {
      if (path == "ListMultipartUploadsResult/Upload/Key") current.key = text;
      if (path == "ListMultipartUploadsResult/Upload/UploadId") current.upload_id = text;
      if (path == "ListMultipartUploadsResult/Upload") out.push_back(std::exchange(current, {}));
      if (path == "ListMultipartUploadsResult/IsTruncated") truncated = text == "true";
      if (path == "ListMultipartUploadsResult/NextKeyMarker") next_key = text;
      if (path == "ListMultipartUploadsResult/NextUploadIdMarker") next_id = text;
    }));
    if (!truncated) return out;
    if (next_key.empty() || (next_key == key_marker && next_id == id_marker)) {
      return Status::IOError(
          "ListMultipartUploads " + Shown(prefix) + ": truncated without a marker", EIO);
    }
    key_marker = next_key;
    id_marker = next_id;
  }
}

}  // namespace stitchfs::engine
