#include "engine/format/manifest_reader.h"

#include <expat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "engine/format/hard_links.h"
#include "engine/format/manifest_fields.h"
#include "engine/format/name_check.h"

namespace stitchfs::engine {
namespace {

struct ParserDeleter {
  void operator()(XML_ParserStruct* p) const { XML_ParserFree(p); }
};
using ParserPtr = std::unique_ptr<XML_ParserStruct, ParserDeleter>;

constexpr size_t kMaxLeafBytes = 1 << 16;

// Expat callbacks for one document. Callbacks never throw: failures are stored in `status_`
// and the parser is stopped.
class SaxState {
 public:
  SaxState(XML_Parser parser, const std::string& backup_name, uint64_t size_hint, bool header_only)
      : parser_(parser), fields_(backup_name), header_only_(header_only) {
    // Smallest possible <file> element is ~38 bytes, and every name is text of the document
    // (unescaping only shortens it); reserving only takes address space.
    fields_.builder().Reserve(static_cast<size_t>(size_hint / 38), static_cast<size_t>(size_hint));
  }

  void Start(const char* name) {
    if (!status_.ok()) return;
    ++depth_;
    if (leaf_ != nullptr)
      return Fail(Status::BackupDamaged(std::string("child element <") + name +
                                        "> inside scalar field <" + leaf_name_ + ">"));
    if (skip_from_ > 0) return;
    std::string_view n = name;
    if (depth_ == 2 && n == "contents") return OpenContents();
    if (depth_ == 2 && !seen_contents_) return BeginLeaf(fields_.HeaderSlot(n), name);
    if (depth_ == 2 && !in_contents_) return BeginNode(n, name);
    if (depth_ == 3 && in_contents_ && n == "file") return fields_.BeginFile();
    if (depth_ == 4 && in_contents_) return BeginLeaf(fields_.FileSlot(n), name);
    if (depth_ > 1) skip_from_ = depth_;
  }

  void End() {
    if (!status_.ok()) return;
    if (skip_from_ > 0) {
      if (depth_-- == skip_from_) skip_from_ = 0;
      return;
    }
    if (leaf_ != nullptr) {
      leaf_ = nullptr;
      if (trailer_) Check(fields_.AddTrailer(*std::exchange(trailer_, std::nullopt), node_text_));
    } else if (depth_ == 3 && in_contents_) {
      Check(fields_.EndFile());
    } else if (depth_ == 2 && in_contents_) {
      in_contents_ = false;
    }
    --depth_;
  }

  void Text(const char* s, int len) {
    if (!status_.ok() || leaf_ == nullptr) return;
    if (leaf_->size() + static_cast<size_t>(len) > kMaxLeafBytes) {
      return Fail(Status::BackupDamaged("value of <" + leaf_name_ + "> is too long"));
    }
    leaf_->append(s, static_cast<size_t>(len));
  }

  void Fail(Status s) {
    if (!status_.ok()) return;
    status_ = s.WithPrefix(Where());
    XML_StopParser(parser_, XML_FALSE);
  }

  // `whole`: the document was read to its end (not only its header).
  Status Finish(bool whole) {
    if (!status_.ok()) return status_;
    if (!seen_contents_) {
      return Status::BackupDamaged(fields_.BackupPrefix() + "Metadata has no <contents>");
    }
    return whole ? fields_.Finish().WithPrefix(fields_.BackupPrefix()) : Status::OK();
  }
  const Status& status() const { return status_; }
  bool header_done() const { return header_done_; }
  ManifestFields& fields() { return fields_; }
  std::string Where() const {
    return fields_.BackupPrefix() + ".backup line " +
           std::to_string(XML_GetCurrentLineNumber(parser_)) + ", column " +
           std::to_string(XML_GetCurrentColumnNumber(parser_) + 1) + ": ";
  }

 private:
  void OpenContents() {
    if (seen_contents_) return Fail(Status::BackupDamaged("second <contents> in the manifest"));
    seen_contents_ = in_contents_ = true;
    Check(fields_.ApplyHeader());
    if (header_only_ && status_.ok()) {
      header_done_ = true;
      XML_StopParser(parser_, XML_FALSE);
    }
  }
  // stitchfs's leaves after </contents> (where ClickHouse ignores them).
  void BeginNode(std::string_view tag, const char* name) {
    trailer_ = ManifestFields::TrailerTag(tag);
    node_text_.clear();
    BeginLeaf(trailer_ ? &node_text_ : nullptr, name);
  }
  void BeginLeaf(std::string* slot, const char* name) {
    if (slot == nullptr) {
      skip_from_ = depth_;
      return;
    }
    leaf_ = slot;
    leaf_name_ = name;
  }
  void Check(Status s) {
    if (!s.ok()) Fail(std::move(s));
  }

  XML_Parser parser_;
  ManifestFields fields_;
  const bool header_only_;
  bool header_done_ = false;
  Status status_;
  int depth_ = 0;
  int skip_from_ = 0;  // Depth of an ignored element being skipped, 0 when none.
  bool seen_contents_ = false;
  bool in_contents_ = false;
  std::string* leaf_ = nullptr;
  std::string leaf_name_;
  std::optional<ManifestFields::Trailer> trailer_;  // Set while inside a trailing leaf.
  std::string node_text_;
};

// Runs `fn` on the state, turning any exception into a stored failure (C frames in between).
template <typename Fn>
void Guarded(void* data, Fn fn) {
  auto* st = static_cast<SaxState*>(data);
  try {
    fn(st);
  } catch (const std::bad_alloc&) {
    st->Fail(Status::IOError("parsing the manifest", ENOMEM));
  } catch (...) {
    st->Fail(Status::Internal("unexpected exception while parsing the manifest"));
  }
}

void OnStart(void* d, const XML_Char* name, const XML_Char**) {
  Guarded(d, [name](SaxState* st) { st->Start(name); });
}
void OnEnd(void* d, const XML_Char*) {
  Guarded(d, [](SaxState* st) { st->End(); });
}
void OnText(void* d, const XML_Char* s, int len) {
  Guarded(d, [s, len](SaxState* st) { st->Text(s, len); });
}
void OnDoctype(void* d, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  Guarded(d, [](SaxState* st) {
    st->Fail(Status::BackupDamaged("a manifest must not contain a DOCTYPE declaration"));
  });
}

class Parser {
 public:
  Parser(const std::string& backup_name, uint64_t size_hint, bool header_only = false)
      : xml_(XML_ParserCreate("UTF-8")), state_(xml_.get(), backup_name, size_hint, header_only) {
    XML_SetUserData(xml_.get(), &state_);
    XML_SetElementHandler(xml_.get(), OnStart, OnEnd);
    XML_SetCharacterDataHandler(xml_.get(), OnText);
    XML_SetStartDoctypeDeclHandler(xml_.get(), OnDoctype);
  }

  // Feeds a chunk; `final` on the last one.
  Status Feed(const char* data, size_t len, bool final) {
    if (state_.header_done()) return Status::OK();
    if (XML_Parse(xml_.get(), data, static_cast<int>(len), final) == XML_STATUS_ERROR) {
      if (state_.header_done()) return Status::OK();
      if (!state_.status().ok()) return state_.status();
      return Status::BackupDamaged(state_.Where() + XML_ErrorString(XML_GetErrorCode(xml_.get())));
    }
    return Status::OK();
  }

  bool header_done() const { return state_.header_done(); }
  StatusOr<ManifestHeader> FinishHeader() {
    RETURN_IF_ERROR(state_.Finish(/*whole=*/false));
    return state_.fields().builder().header();
  }

  StatusOr<std::unique_ptr<const Manifest>> Finish() {
    RETURN_IF_ERROR(state_.Finish(/*whole=*/true));
    std::unique_ptr<const Manifest> m = state_.fields().builder().Finish();
    RETURN_IF_ERROR(CheckNames(*m).WithPrefix(state_.fields().BackupPrefix()));
    RETURN_IF_ERROR(CheckLinks(*m).WithPrefix(state_.fields().BackupPrefix()));
    return m;
  }

 private:
  ParserPtr xml_;
  SaxState state_;
};

}  // namespace

StatusOr<std::unique_ptr<const Manifest>> ReadManifestFd(int fd, const std::string& backup_name,
                                                         uint64_t size_hint) {
  Parser parser(backup_name, size_hint);
  constexpr size_t kChunk = 1 << 18;
  auto buf = std::make_unique<char[]>(kChunk);
  for (;;) {
    ssize_t n = ::read(fd, buf.get(), kChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("Backup " + backup_name + ": read .backup", errno);
    RETURN_IF_ERROR(parser.Feed(buf.get(), static_cast<size_t>(n), n == 0));
    if (n == 0) break;
  }
  return parser.Finish();
}

StatusOr<ManifestHeader> ReadManifestHeaderFd(int fd, const std::string& backup_name) {
  Parser parser(backup_name, 0, /*header_only=*/true);
  char buf[8192];
  while (!parser.header_done()) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError("Backup " + backup_name + ": read .backup", errno);
    RETURN_IF_ERROR(parser.Feed(buf, static_cast<size_t>(n), n == 0));
    if (n == 0) break;
  }
  return parser.FinishHeader();
}

namespace {

// Feeds `file` to `parser` in chunks until it is done (or the header is, for header-only).
Status FeedFile(Parser& parser, const RandomAccessFile& file, size_t chunk) {
  auto buf = std::make_unique<char[]>(chunk);
  for (uint64_t off = 0; !parser.header_done();) {
    ASSIGN_OR_RETURN(size_t n, file.ReadAt(off, std::span<char>(buf.get(), chunk)));
    RETURN_IF_ERROR(parser.Feed(buf.get(), n, n == 0));
    if (n == 0) break;
    off += n;
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<const Manifest>> ReadManifest(const RandomAccessFile& file,
                                                       const std::string& backup_name) {
  Parser parser(backup_name, file.size());
  RETURN_IF_ERROR(FeedFile(parser, file, size_t{1} << 18));
  return parser.Finish();
}

StatusOr<ManifestHeader> ReadManifestHeader(const RandomAccessFile& file,
                                            const std::string& backup_name) {
  Parser parser(backup_name, 0, /*header_only=*/true);
  RETURN_IF_ERROR(FeedFile(parser, file, 8192));
  return parser.FinishHeader();
}

StatusOr<std::unique_ptr<const Manifest>> ParseManifest(std::string_view xml,
                                                        const std::string& backup_name) {
  Parser parser(backup_name, xml.size());
  constexpr size_t kChunk = 1 << 30;
  while (xml.size() > kChunk) {
    RETURN_IF_ERROR(parser.Feed(xml.data(), kChunk, false));
    xml.remove_prefix(kChunk);
  }
  RETURN_IF_ERROR(parser.Feed(xml.data(), xml.size(), true));
  return parser.Finish();
}

}  // namespace stitchfs::engine
