// MemStorage's writing side: a backup being written, with the local backend's lock rules
// (BackupLock) and durability (LocalWriter::Finish).
#include <cerrno>

#include "engine/backends/mem/mem_storage.h"
#include "engine/storage/lock_text.h"

namespace stitchfs::engine {
namespace {

constexpr const char* kMemStaging = ".stitch-tmp";

// The folder holding `path`.
std::string ParentOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// A file written through a buffer: its bytes reach the file at Close (or when it is dropped,
// as a written file keeps what was written), not before.
class MemWritable final : public WritableFile {
 public:
  MemWritable(MemProcess p, uint64_t ino, std::string name)
      : p_(std::move(p)), ino_(ino), name_(std::move(name)) {}
  ~MemWritable() override {
    if (!closed_) Flush().IgnoreError();
  }

  Status Append(std::string_view data) override {
    {
      std::lock_guard<std::mutex> lock(p_.disk->mu);
      RETURN_IF_ERROR(p_.disk->Check(p_.session));
    }
    if (closed_) return Status::IOError("write data file " + name_ + " after close", EBADF);
    buf_.append(data);
    return Status::OK();
  }
  Status Close() override {
    if (closed_) return Status::IOError("close data file " + name_ + " twice", EBADF);
    closed_ = true;
    return Flush();
  }

 private:
  Status Flush() {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    if (p_.disk->tree.Exists(ino_)) {
      p_.disk->tree.SetData(ino_, std::make_shared<const std::string>(std::move(buf_)));
      p_.disk->Changed();
    }
    return Status::OK();
  }

  const MemProcess p_;
  const uint64_t ino_;
  const std::string name_;
  std::string buf_;
  bool closed_ = false;
};

class MemWriter final : public BackupWriter {
 public:
  MemWriter(MemProcess p, std::string dest, uint64_t dir, uint64_t lock, bool created)
      : p_(std::move(p)), dest_(std::move(dest)), dir_(dir), lock_(lock), created_(created) {}
  ~MemWriter() override;

  StatusOr<std::unique_ptr<WritableFile>> CreateStaged(const std::string& id,
                                                       const std::string& /*name*/) override {
    return Create(JoinMemPath(Staging(), id), /*exclusive=*/false);
  }
  Status DropStaged(const std::string& id) override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(Owned());
    Status s = p_.disk->tree.Remove(JoinMemPath(Staging(), id));
    p_.disk->Changed();
    return s.ok() || s.sys_errno() == ENOENT ? Status::OK() : s;
  }
  Status Publish(const std::string& id, const std::string& name) override {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(Owned());
    const std::string to = JoinMemPath(dest_, name);
    RETURN_IF_ERROR(p_.disk->tree.MakeFolders(ParentOf(to)).status());
    RETURN_IF_ERROR(p_.disk->tree.Rename(JoinMemPath(Staging(), id), to));
    p_.disk->Changed();
    return Status::OK();
  }
  StatusOr<std::unique_ptr<WritableFile>> CreateDataFile(const std::string& name) override {
    return Create(JoinMemPath(dest_, name), /*exclusive=*/true);
  }
  Status Finish(std::string_view manifest) override;
  StatusOr<std::shared_ptr<const RandomAccessFile>> ReadBack(const std::string& name,
                                                             uint64_t size) override {
    {
      std::lock_guard<std::mutex> lock(p_.disk->mu);
      RETURN_IF_ERROR(Owned());
    }
    const MemStorage storage(p_);
    // The folder this writer took, not whatever the path names now.
    const auto folder =
        std::make_shared<const MemFolder>(dest_, FolderIdentity{p_.disk->dev, dir_});
    ASSIGN_OR_RETURN(auto file, storage.OpenDataFile(folder, name, size));
    RETURN_IF_ERROR(file->CheckDeclaredSize(size));
    return std::shared_ptr<const RandomAccessFile>(std::move(file));
  }

 private:
  std::string Staging() const { return JoinMemPath(dest_, kMemStaging); }
  // OK while this process lives and the destination is still the folder it took.
  // REQUIRES: mu held.
  Status Owned() const {
    RETURN_IF_ERROR(p_.disk->Check(p_.session));
    if (p_.disk->tree.Find(dest_) == dir_) return Status::OK();
    return Status::IOError("the destination " + dest_ + " was moved or removed", ENOENT);
  }
  StatusOr<std::unique_ptr<WritableFile>> Create(const std::string& path, bool exclusive) {
    std::lock_guard<std::mutex> lock(p_.disk->mu);
    RETURN_IF_ERROR(Owned());
    RETURN_IF_ERROR(p_.disk->tree.MakeFolders(ParentOf(path)).status());
    ASSIGN_OR_RETURN(const uint64_t ino, p_.disk->tree.CreateFile(path, "", exclusive));
    p_.disk->Changed();
    return std::unique_ptr<WritableFile>(new MemWritable(p_, ino, path));
  }
  // Everything in the destination but `.backup` and `.lock`. REQUIRES: mu held.
  void RemoveData();

  const MemProcess p_;
  const std::string dest_;
  const uint64_t dir_, lock_;
  const bool created_;
  bool committed_ = false;
};

void MemWriter::RemoveData() {
  std::vector<std::string> names;
  for (const auto& [name, child] : p_.disk->tree.node(dir_).children) names.push_back(name);
  for (const std::string& n : names) {
    if (n != ".lock" && n != ".backup") p_.disk->tree.RemoveAll(JoinMemPath(dest_, n));
  }
}

Status MemWriter::Finish(std::string_view manifest) {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(Owned());
  MemTree& t = p_.disk->tree;
  RETURN_IF_ERROR(t.Remove(Staging()));
  t.SyncAll();  // syncfs: every data file durable before the manifest naming them exists.
  std::string bytes(manifest);
  if (p_.disk->corrupt_manifests.erase(dest_) && !bytes.empty()) bytes[0] ^= 0x01;
  ASSIGN_OR_RETURN(const uint64_t m, t.CreateFile(JoinMemPath(dest_, ".backup"), std::move(bytes),
                                                  /*exclusive=*/false));
  t.Sync(m);  // WriteFileAtomically.
  t.Sync(dir_);
  RETURN_IF_ERROR(t.Remove(JoinMemPath(dest_, ".lock")));  // BackupLock::Commit.
  p_.disk->writer_locks.erase(lock_);
  committed_ = true;
  t.Sync(dir_);
  p_.disk->Changed();
  return Status::OK();
}

MemWriter::~MemWriter() {
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  if (committed_ || !p_.disk->Alive(p_.session)) return;  // The dead clean nothing up.
  p_.disk->writer_locks.erase(lock_);
  if (!Owned().ok()) return;
  MemTree& t = p_.disk->tree;
  t.RemoveAll(JoinMemPath(dest_, ".backup"));  // First: never a manifest without its data.
  RemoveData();
  t.Remove(JoinMemPath(dest_, ".lock")).IgnoreError();
  if (created_) t.Remove(dest_).IgnoreError();
  p_.disk->Changed();
}

// kBackupAlreadyExists if a folder above `dest` holds a `.backup` or a `.lock`. REQUIRES: mu.
Status RefuseInsideABackup(const MemTree& t, const std::string& dest) {
  for (std::string up = ParentOf(dest);; up = ParentOf(up)) {
    for (const char* name : {".backup", ".lock"}) {
      const uint64_t ino = t.Find(JoinMemPath(up, name));
      if (ino != 0 && !t.node(ino).folder) {
        return Status::BackupAlreadyExists("cannot write backup " + dest + " inside backup " + up +
                                           " (it holds " + name + ")");
      }
    }
    if (up == "/") return Status::OK();
  }
}

}  // namespace

StatusOr<std::unique_ptr<BackupWriter>> MemStorage::StartBackup(const std::string& location,
                                                                const WriterIntent& intent,
                                                                std::string* notice) const {
  const std::string dest = Normal(location);
  std::lock_guard<std::mutex> lock(p_.disk->mu);
  RETURN_IF_ERROR(p_.disk->Check(p_.session));
  MemTree& t = p_.disk->tree;
  RETURN_IF_ERROR(RefuseInsideABackup(t, dest));
  bool created = false;
  auto dir = t.MakeFolders(dest, &created);
  if (!dir.ok() && dir.status().sys_errno() == EEXIST) {
    return Status::BackupAlreadyExists("destination " + dest + " exists and is not a folder");
  }
  RETURN_IF_ERROR(dir.status());
  if (t.FindBeneath(*dir, ".backup") != 0) {
    return Status::BackupAlreadyExists("Backup " + dest + " already exists");
  }
  const uint64_t old_lock = t.FindBeneath(*dir, ".lock");
  if (old_lock == 0 && !t.node(*dir).children.empty()) {
    return Status::BackupAlreadyExists("destination " + dest + " is not empty");
  }
  if (old_lock != 0 && p_.disk->LockHeld(old_lock)) {
    return Status::BackupAlreadyExists("Backup " + dest + " is being written already");
  }
  const bool stale = old_lock != 0 && !t.node(old_lock).folder && !t.node(old_lock).data->empty();
  ASSIGN_OR_RETURN(const uint64_t held, t.CreateFile(JoinMemPath(dest, ".lock"), LockText(intent),
                                                     /*exclusive=*/false));
  p_.disk->writer_locks.erase(old_lock);
  p_.disk->writer_locks[held] = p_.session;
  if (old_lock != 0) {
    *notice = "took over " + dest + "/.lock left by a backup that did not finish" +
              (stale ? "; removed its partial data" : "");
    std::vector<std::string> names;
    for (const auto& [name, child] : t.node(*dir).children) names.push_back(name);
    for (const std::string& n : names) {
      if (n != ".lock") t.RemoveAll(JoinMemPath(dest, n));
    }
  }
  p_.disk->Changed();
  if (Status s = t.MakeFolders(JoinMemPath(dest, kMemStaging)).status(); !s.ok()) {
    p_.disk->writer_locks.erase(held);
    return s;
  }
  return std::unique_ptr<BackupWriter>(new MemWriter(p_, dest, *dir, held, created));
}

}  // namespace stitchfs::engine
