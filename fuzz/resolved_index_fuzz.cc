// libFuzzer target for resolved indexes (ResolvedIndex::Decode), which a reader finds beside a
// backup's manifest or in its cache and must never trust beyond what it checks. At startup a
// real three-level chain is written with the snapshot writer (appends, a rename, duplicates,
// an empty file) and the index the writer keeps for its top is read. The first input byte picks
// a mode:
//   0  the rest is an index, decoded as it is;
//   1  the rest is (offset, xor) byte pairs applied to the real index, checksum left as it is;
//   2  as 1, then the XXH3-128 in the header is recomputed, so structural corruption behind a
//      valid checksum is reached (of the section table, engine/base/index_codec.h, and of the
//      index's own records).
// Whatever Decode accepts must describe every file with extents that add up to its size, on
// levels of the chain, and every file must read exactly its size or fail with an error.
#include <stdlib.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "engine/backends/local/local_storage.h"
#include "engine/base/index_codec.h"
#include "engine/read/resolved_index.h"
#include "engine/storage/backup.h"
#include "engine/write/snapshot_writer.h"
#include "fuzz/fuzz_common.h"

namespace {

namespace eng = stitchfs::engine;
namespace fs = std::filesystem;
using stitchfs::fuzz::Require;

// Where the index codec keeps the checksum of what follows its header (low 64 bits, then high).
constexpr size_t kHeaderBytes = eng::IndexLayout::kHeaderBytes;
constexpr size_t kHashAt = eng::IndexLayout::kHashOffset;

void Put(const fs::path& p, const std::string& bytes, bool append = false) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, append ? std::ios::app | std::ios::binary : std::ios::binary) << bytes;
}

struct Chain {
  std::string index;  // The top's own, as the writer kept it.
  std::shared_ptr<const eng::Backup> top;
  eng::ChainOptions options;
};

void Backup(const fs::path& src, const fs::path& dest, const fs::path& base) {
  eng::BackupOptions o;
  o.source = src;
  o.dest = dest;
  o.base = base.empty() ? "" : base.string();
  o.chain.storage = eng::LocalStorage::Create();
  o.jobs = 1;
  auto s = eng::WriteBackup(o, {});
  Require(s.ok(), "backup for the seed chain", s.ok() ? "" : s.status().ToString());
}

// The seed chain's folder, removed when the fuzzer exits (libFuzzer ends with exit()).
std::string* chain_dir = nullptr;
void RemoveChainDir() {
  std::error_code ec;
  if (chain_dir != nullptr) fs::remove_all(*chain_dir, ec);
}

const Chain& TheChain() {
  static const Chain* chain = [] {
    char tmpl[] = "/tmp/stitchfs-index-fuzz-XXXXXX";
    Require(::mkdtemp(tmpl) != nullptr, "mkdtemp");
    chain_dir = new std::string(tmpl);
    std::atexit(RemoveChainDir);
    const fs::path dir = tmpl, src = dir / "src";
    Put(src / "log/app.log", std::string(5000, 'a'));
    Put(src / "t/p1/columns.txt", "columns format version: 1\n");
    Put(src / "t/p2/columns.txt", "columns format version: 1\n");
    Put(src / "old.bin", "renamed content");
    Put(src / "empty", "");
    Backup(src, dir / "b0", "");
    Put(src / "log/app.log", std::string(300, 'b'), /*append=*/true);
    fs::rename(src / "old.bin", src / "new.bin");
    Put(src / "fresh.bin", "fresh");
    Backup(src, dir / "b1", dir / "b0");
    Put(src / "log/app.log", std::string(70, 'c'), /*append=*/true);
    Put(src / "copy/a.bin", "same bytes twice");
    Put(src / "copy/b.bin", "same bytes twice");
    Backup(src, dir / "b2", dir / "b1");
    auto* c = new Chain;
    std::stringstream s;
    s << std::ifstream(dir / "b2/.stitchfs/index", std::ios::binary).rdbuf();
    c->index = s.str();
    Require(c->index.size() > kHeaderBytes, "the writer keeps an index");
    c->options.storage = eng::LocalStorage::Create();
    auto top = eng::Backup::Open(*c->options.storage, dir / "b2", nullptr);
    Require(top.ok(), "open the top");
    c->top = *top;
    auto good =
        eng::ResolvedIndex::Decode(eng::SharedBytes::Copy(c->index), c->top, c->options, true);
    Require(good.ok(), "the writer's index decodes", good.ok() ? "" : good.status().ToString());
    return c;
  }();
  return *chain;
}

void Check(const eng::ResolvedBackup& r) {
  const eng::Manifest& m = r.top().manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) {
    uint64_t total = 0;
    for (const auto& x : r.Extents(i)) {
      Require(x.level < r.depth(), "an extent's level is in the chain");
      total += x.length;
    }
    Require(total == m.entry(i).size, "extents add up to the file's size");
    auto f = r.OpenEntry(i);
    if (!f.ok()) continue;
    std::string bytes((*f)->size(), '\0');
    auto n = (*f)->ReadAt(0, bytes);
    Require((*f)->size() == m.entry(i).size, "a file opens at its size");
    Require(!n.ok() || *n == bytes.size(), "a file reads whole or fails");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Chain& c = TheChain();
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 3;
  std::string index(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode != 0) {
    index = c.index;
    for (size_t k = 1; k + 2 < size; k += 3) {
      const size_t at = ((size_t{data[k]} << 8) | data[k + 1]) % index.size();
      index[at] = static_cast<char>(index[at] ^ (data[k + 2] | 1));
    }
  }
  if (mode == 2) {
    const XXH128_hash_t h = XXH3_128bits(index.data() + kHeaderBytes, index.size() - kHeaderBytes);
    std::memcpy(&index[kHashAt], &h.low64, 8);
    std::memcpy(&index[kHashAt + 8], &h.high64, 8);
  }
  auto r = stitchfs::engine::ResolvedIndex::Decode(stitchfs::engine::SharedBytes::Copy(index),
                                                   c.top, c.options, true);
  if (r.ok()) Check(**r);
  return 0;
}
