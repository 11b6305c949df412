#include "tests/testutil/fixture.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "engine/format/manifest_writer.h"
#include "engine/location/locator.h"

namespace fs = std::filesystem;

namespace stitchfs::testutil {

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "stitch-test-XXXXXX").string();
  char* p = ::mkdtemp(tmpl.data());
  if (p == nullptr) std::abort();
  path_ = p;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void WriteFile(const std::string& path, std::string_view data) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) std::abort();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

std::string NewUuid() {
  static std::mt19937_64 rng(std::random_device{}());
  char buf[40];
  uint64_t a = rng(), b = rng();
  std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-8%03x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>(a >> 16) & 0xffff, static_cast<unsigned>(a) & 0xfff,
                static_cast<unsigned>(b >> 48) & 0xfff,
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

FixtureBackup::FixtureBackup(std::string dir, engine::ChecksumAlgorithm alg)
    : dir_(std::move(dir)) {
  header.version = 1;
  header.deduplicate_files = true;
  header.timestamp = "2026-10-01 12:00:00";
  header.uuid = NewUuid();
  header.algorithm = alg;
}

void FixtureBackup::SetBase(const FixtureBackup& base) {
  fs::path mine(dir_), theirs(base.dir_);
  header.base_backup = mine.parent_path() == theirs.parent_path()
                           ? engine::FileLocator(theirs.filename().string())
                           : engine::FileLocator(theirs.string());
  header.base_backup_uuid = base.uuid();
}

engine::Checksum FixtureBackup::Sum(std::string_view content) const {
  return engine::Hasher::Of(header.algorithm, content);
}

void FixtureBackup::AddRaw(const engine::FileEntry& e, std::string_view data) {
  Owned o{std::string(e.name), std::string(e.data_file), e};
  entries_.push_back(std::move(o));
  if (!data.empty() || (e.has_data_file() && (e.data_file.empty() || e.data_file == e.name))) {
    data_.emplace_back(e.data_file.empty() ? std::string(e.name) : std::string(e.data_file),
                       std::string(data));
  }
}

void FixtureBackup::AddStored(std::string_view name, std::string_view content) {
  engine::FileEntry e;
  e.name = name;
  e.size = content.size();
  e.checksum = Sum(content);
  AddRaw(e, content);
}

void FixtureBackup::AddStitched(std::string_view name, std::string_view content,
                                uint64_t base_size) {
  engine::FileEntry e;
  e.name = name;
  e.size = content.size();
  e.checksum = Sum(content);
  e.base_size = base_size;
  e.base_checksum = Sum(content.substr(0, base_size));
  AddRaw(e, content.substr(base_size));
}

void FixtureBackup::AddFromBase(std::string_view name, std::string_view content) {
  engine::FileEntry e;
  e.name = name;
  e.size = content.size();
  e.checksum = Sum(content);
  e.base_size = e.size;
  e.base_checksum = e.checksum;
  AddRaw(e);
}

void FixtureBackup::AddDuplicate(std::string_view name, std::string_view content,
                                 std::string_view data_of) {
  engine::FileEntry e;
  e.name = name;
  e.size = content.size();
  e.checksum = Sum(content);
  e.data_file = data_of;
  entries_.push_back(Owned{std::string(name), std::string(data_of), e});
}

void FixtureBackup::AddEmpty(std::string_view name) {
  engine::FileEntry e;
  e.name = name;
  AddRaw(e);
}

engine::StatusOr<std::string> FixtureBackup::ManifestXml() const {
  std::vector<engine::FileEntry> list;
  for (const Owned& o : entries_) {
    engine::FileEntry e = o.e;
    e.name = o.name;
    e.data_file = o.data_file;
    list.push_back(e);
  }
  std::string xml;
  RETURN_IF_ERROR(engine::RenderManifest(header, list, &xml));
  return xml;
}

engine::Status FixtureBackup::Write() {
  fs::create_directories(dir_);
  for (const auto& [file, bytes] : data_) WriteFile(dir_ + "/" + file, bytes);
  ASSIGN_OR_RETURN(std::string xml, ManifestXml());
  WriteFile(dir_ + "/.backup", xml);
  return engine::Status::OK();
}

}  // namespace stitchfs::testutil
