#include "engine/format/manifest_writer.h"

#include <charconv>

#include "engine/base/path_check.h"

namespace stitchfs::engine {
namespace {

// Length of the UTF-8 sequence starting at s[i] if it is valid and allowed, else 0.
size_t AllowedCharAt(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return (c >= 0x20 || c == '\t' || c == '\n') ? 1 : 0;
  size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (len == 0 || c > 0xf4 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  }
  uint32_t cp = len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (b(i + k) & 0x3f);
  bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  bool bad =
      overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff;
  return bad ? 0 : len;
}

std::string HexEscape(char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
}

void AppendEscaped(std::string_view s, std::string* out) {
  for (char c : s) {
    switch (c) {
      case '&':
        out->append("&amp;");
        break;
      case '<':
        out->append("&lt;");
        break;
      case '>':
        out->append("&gt;");
        break;
      case '"':
        out->append("&quot;");
        break;
      case '\'':
        out->append("&apos;");
        break;
      default:
        out->push_back(c);
    }
  }
}

void Leaf(std::string* out, const char* tag, std::string_view value) {
  out->append("<").append(tag).append(">");
  AppendEscaped(value, out);
  out->append("</").append(tag).append(">");
}

Status CheckWritable(const FileEntry& e) {
  const std::string what = "entry \"" + std::string(e.name) + "\"";
  RETURN_IF_ERROR(CheckXmlText(e.name, what));
  RETURN_IF_ERROR(CheckRelativePath(e.name));
  if (e.base_size > e.size) return Status::InvalidArgument(what + ": base_size > size");
  if (!e.data_file.empty() && e.data_file != e.name) {
    if (!e.has_data_file()) return Status::InvalidArgument(what + ": data_file without data");
    RETURN_IF_ERROR(CheckXmlText(e.data_file, what + " data_file"));
    RETURN_IF_ERROR(CheckRelativePath(e.data_file));
  }
  return Status::OK();
}

void RenderEntry(const FileEntry& e, std::string* out) {
  out->append("<file>");
  Leaf(out, "name", e.name);
  Leaf(out, "size", std::to_string(e.size));
  if (e.size > 0) {
    Leaf(out, "checksum", e.checksum.ToHex());
    if (e.base_size > 0) {
      Leaf(out, "use_base", "true");
      if (e.base_size != e.size) {
        Leaf(out, "base_size", std::to_string(e.base_size));
        Leaf(out, "base_checksum", e.base_checksum.ToHex());
      }
    }
    if (e.has_data_file() && !e.data_file.empty() && e.data_file != e.name) {
      Leaf(out, "data_file", e.data_file);
    }
    if (e.encrypted_by_disk) Leaf(out, "encrypted_by_disk", "true");
  }
  if (e.meta) Leaf(out, "stitchfs_meta", e.meta->ToText());
  out->append("</file>");
}

}  // namespace

Status CheckXmlText(std::string_view s, std::string_view what) {
  for (size_t i = 0; i < s.size();) {
    size_t n = AllowedCharAt(s, i);
    if (n == 0) {
      return Status::InvalidArgument(std::string(what) + " has a byte XML cannot carry at offset " +
                                     std::to_string(i));
    }
    i += n;
  }
  return Status::OK();
}

std::string MakePrintable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = AllowedCharAt(s, i);
    const char c = s[i];
    if (n > 0 && c != '\t' && c != '\n') {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    out += c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : HexEscape(c);
    ++i;
  }
  return out;
}

std::string MissingToText(const MissingFile& f) {
  return std::to_string(f.name.size()) + " " + f.name + f.reason;
}

std::optional<MissingFile> MissingFromText(std::string_view text) {
  const size_t sp = text.find(' ');
  size_t len = 0;
  if (sp == std::string_view::npos || sp == 0) return std::nullopt;
  auto [p, ec] = std::from_chars(text.data(), text.data() + sp, len);
  if (ec != std::errc() || p != text.data() + sp || len > text.size() - sp - 1) return std::nullopt;
  return MissingFile{std::string(text.substr(sp + 1, len)), std::string(text.substr(sp + 1 + len))};
}

Status RenderManifest(const ManifestHeader& h, std::span<const FileEntry> entries, std::string* out,
                      std::span<const Node> nodes, std::span<const MissingFile> missing) {
  for (const MissingFile& f : missing) {
    RETURN_IF_ERROR(CheckXmlText(f.name, "missing file name"));
    RETURN_IF_ERROR(CheckXmlText(f.reason, "missing file reason"));
  }
  for (const std::string* s :
       {&h.timestamp, &h.uuid, &h.backup_id, &h.data_file_name_generator, &h.base_backup}) {
    RETURN_IF_ERROR(CheckXmlText(*s, "manifest header"));
  }
  for (const FileEntry& e : entries) RETURN_IF_ERROR(CheckWritable(e));
  for (const Node& n : nodes) {
    RETURN_IF_ERROR(CheckXmlText(n.name, "node \"" + std::string(n.name) + "\""));
    RETURN_IF_ERROR(CheckRelativePath(n.name));
    RETURN_IF_ERROR(CheckXmlText(n.target, "symlink target of \"" + std::string(n.name) + "\""));
  }
  out->append("<config>");
  Leaf(out, "version", std::to_string(h.version));
  Leaf(out, "deduplicate_files", h.deduplicate_files.value_or(true) ? "1" : "0");
  Leaf(out, "timestamp", h.timestamp);
  Leaf(out, "uuid", h.uuid);
  if (!h.backup_id.empty()) Leaf(out, "backup_id", h.backup_id);
  if (!h.data_file_name_generator.empty()) {
    Leaf(out, "data_file_name_generator", h.data_file_name_generator);
  }
  if (!h.base_backup.empty()) {
    Leaf(out, "base_backup", h.base_backup);
    Leaf(out, "base_backup_uuid", h.base_backup_uuid.value_or(""));
    if (h.copy_s3_credentials) {
      Leaf(out, "base_backup_copy_s3_credentials_from_backup", "true");
    }
  }
  if (h.algorithm != ChecksumAlgorithm::kClickHouse) {
    Leaf(out, "stitchfs_checksum", ChecksumAlgorithmName(h.algorithm));
  }
  if (!missing.empty()) Leaf(out, "stitchfs_incomplete", std::to_string(missing.size()));
  if (h.read_start_ns && *h.read_start_ns >= 0) {
    Leaf(out, "stitchfs_read_start", std::to_string(*h.read_start_ns));
  }
  out->append("<contents>");
  for (const FileEntry& e : entries) RenderEntry(e, out);
  out->append("</contents>");
  for (const Node& n : nodes) {
    Leaf(out, n.type == NodeType::kDir ? "stitchfs_dir" : "stitchfs_symlink", NodeToText(n));
  }
  for (const MissingFile& f : missing) Leaf(out, "stitchfs_missing", MissingToText(f));
  out->append("</config>");
  return Status::OK();
}

}  // namespace stitchfs::engine
