#include "fs/fuse_ops.h"

#include <fcntl.h>
#include <syslog.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "engine/error_table.h"
#include "fs/mount_state.h"
#include "fs/xattrs.h"

namespace stitchfs::fs {

void LogError(const MountState& s, const std::string& line) {
  if (s.foreground) {
    std::fprintf(stderr, "stitchfs: %s\n", line.c_str());
  } else {
    ::syslog(LOG_ERR, "%s", line.c_str());
  }
}

namespace {

MountState& State(fuse_req_t req) { return *static_cast<MountState*>(fuse_req_userdata(req)); }

// An open file: the shared, immutable reader. Created by OnOpen, deleted by OnRelease.
struct OpenFile {
  std::shared_ptr<const engine::RandomAccessFile> reader;
};

// Runs `fn`, which must reply; if it throws, replies ENOMEM or EIO (the one catch site).
template <typename Fn>
void Guard(fuse_req_t req, Fn fn) {
  try {
    fn();
  } catch (const std::bad_alloc&) {
    fuse_reply_err(req, ENOMEM);
  } catch (...) {
    LogError(State(req), "internal error: unexpected exception");
    fuse_reply_err(req, EIO);
  }
}

// Replies with the errno of `s`, logging it when it is an EIO.
void ReplyError(fuse_req_t req, const engine::Status& s) {
  const int err = engine::ErrnoFor(s);
  if (err == EIO) LogError(State(req), s.ToString());
  fuse_reply_err(req, err);
}

fuse_entry_param Entry(const MountState& s, uint32_t ino) {
  fuse_entry_param e = {};
  e.ino = ino;  // 0: a negative entry, cached like a positive one.
  if (ino != 0) e.attr = s.table.Stat(ino, s.attr);
  e.attr_timeout = s.timeout;
  e.entry_timeout = s.timeout;
  return e;
}

// Every readdir is a readdirplus: the entries' attributes come with the listing, so walking a
// tree (find, ls -lR, du) needs no LOOKUP per sub-folder. Cheap here: attributes are in memory.
// Folders need no open (see ops.opendir).
void OnInit(void*, fuse_conn_info* conn) {
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
  if (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
}

// Replies: entry | err
void OnLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guard(req, [&] {
    const MountState& s = State(req);
    if (s.table.Get(parent) == nullptr) return (void)fuse_reply_err(req, ENOENT);
    fuse_entry_param e = Entry(s, s.table.Lookup(parent, name));
    fuse_reply_entry(req, &e);
  });
}

// Replies: attr | err
void OnGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Guard(req, [&] {
    const MountState& s = State(req);
    if (s.table.Get(ino) == nullptr) return (void)fuse_reply_err(req, ENOENT);
    struct stat st = s.table.Stat(ino, s.attr);
    fuse_reply_attr(req, &st, s.timeout);
  });
}

// Replies: readlink | err
void OnReadlink(fuse_req_t req, fuse_ino_t ino) {
  Guard(req, [&] {
    const MountState& s = State(req);
    const Inode* n = s.table.Get(ino);
    if (n == nullptr || n->type != InodeType::kSymlink) return (void)fuse_reply_err(req, EINVAL);
    fuse_reply_readlink(req, std::string(s.chain->top().manifest().node(n->ref).target).c_str());
  });
}

// Fills a readdir(plus) buffer from offset `off`: 0 ".", 1 "..", then child k at k + 2.
void ReplyDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus) {
  const MountState& s = State(req);
  const Inode* dir = s.table.Get(ino);
  if (dir == nullptr || dir->type != InodeType::kDir) return (void)fuse_reply_err(req, ENOTDIR);
  auto kids = s.table.Children(*dir);
  std::vector<char> buf(size);
  size_t used = 0;
  for (off_t i = off; i < static_cast<off_t>(kids.size()) + 2; ++i) {
    const uint32_t child = i == 0   ? static_cast<uint32_t>(ino)
                           : i == 1 ? dir->parent
                                    : kids[i - 2].ino;
    const std::string name = i == 0 ? "." : i == 1 ? ".." : std::string(kids[i - 2].Name());
    size_t n;
    if (plus) {
      fuse_entry_param e = Entry(s, child);
      n = fuse_add_direntry_plus(req, buf.data() + used, size - used, name.c_str(), &e, i + 1);
    } else {
      struct stat st = s.table.Stat(child, s.attr);
      n = fuse_add_direntry(req, buf.data() + used, size - used, name.c_str(), &st, i + 1);
    }
    if (n > size - used) break;
    used += n;
  }
  fuse_reply_buf(req, buf.data(), used);
}

// Replies: buf | data | err
void OnReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  Guard(req, [&] { ReplyDir(req, ino, size, off, false); });
}
void OnReaddirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  Guard(req, [&] { ReplyDir(req, ino, size, off, true); });
}

// Replies: open | err
void OnOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guard(req, [&] {
    const MountState& s = State(req);
    const Inode* n = s.table.Get(ino);
    if (n == nullptr) return (void)fuse_reply_err(req, ENOENT);
    if (n->type == InodeType::kDir) return (void)fuse_reply_err(req, EISDIR);
    if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
      return (void)fuse_reply_err(req, EROFS);
    }
    auto reader = s.chain->OpenEntry(n->ref);
    if (!reader.ok()) return ReplyError(req, reader.status());
    fi->fh = reinterpret_cast<uint64_t>(new OpenFile{*reader});
    fi->keep_cache = 1;  // Content never changes: keep the page cache across opens.
    fuse_reply_open(req, fi);
  });
}

// Replies: buf | err
void OnRead(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  Guard(req, [&] {
    const auto* f = reinterpret_cast<const OpenFile*>(fi->fh);
    thread_local std::vector<char> buf;
    if (buf.size() < size) buf.resize(size);
    auto n = f->reader->ReadAt(static_cast<uint64_t>(off), std::span<char>(buf.data(), size));
    if (!n.ok()) return ReplyError(req, n.status());
    fuse_reply_buf(req, buf.data(), *n);
  });
}

// Replies: err
void OnRelease(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete reinterpret_cast<OpenFile*>(fi->fh);
  fuse_reply_err(req, 0);
}

// Replies: statfs | err
void OnStatfs(fuse_req_t req, fuse_ino_t) {
  Guard(req, [&] {
    const MountState& s = State(req);
    struct statvfs sv = {};
    sv.f_bsize = sv.f_frsize = 4096;
    sv.f_blocks = (s.total_size + 4095) / 4096;
    sv.f_files = s.table.size();
    sv.f_namemax = 255;
    sv.f_flag = ST_RDONLY;
    fuse_reply_statfs(req, &sv);
  });
}

// Replies `value` for getxattr/listxattr: its size when size == 0, ERANGE if too small.
void ReplyXattr(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) return (void)fuse_reply_xattr(req, value.size());
  if (size < value.size()) return (void)fuse_reply_err(req, ERANGE);
  fuse_reply_buf(req, value.data(), value.size());
}

// Replies: buf | data | xattr | err
void OnGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  Guard(req, [&] {
    auto v = XattrValue(State(req), ino, name);
    if (!v) return (void)fuse_reply_err(req, ENODATA);
    ReplyXattr(req, *v, size);
  });
}

// Replies: buf | data | xattr | err
void OnListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  Guard(req, [&] {
    std::string all;
    for (const auto& n : XattrNames(State(req), ino)) all.append(n).push_back('\0');
    ReplyXattr(req, all, size);
  });
}

// Every modifying operation: the backup is read-only.
void Erofs(fuse_req_t req) { fuse_reply_err(req, EROFS); }

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops = {};
  ops.init = OnInit;
  ops.lookup = OnLookup;
  ops.getattr = OnGetattr;
  ops.readlink = OnReadlink;
  // No OPENDIR/RELEASEDIR round trips at all (the kernel stops asking after this ENOSYS): a
  // cold `find` over small folders gets ~25% faster, a repeated one ~40%, measured against
  // opendir with cache_readdir.
  ops.opendir = [](fuse_req_t r, fuse_ino_t, fuse_file_info*) { fuse_reply_err(r, ENOSYS); };
  ops.readdir = OnReaddir;
  ops.readdirplus = OnReaddirplus;
  ops.open = OnOpen;
  ops.read = OnRead;
  ops.release = OnRelease;
  ops.statfs = OnStatfs;
  ops.getxattr = OnGetxattr;
  ops.listxattr = OnListxattr;
  ops.setattr = [](fuse_req_t r, fuse_ino_t, struct stat*, int, fuse_file_info*) { Erofs(r); };
  ops.mknod = [](fuse_req_t r, fuse_ino_t, const char*, mode_t, dev_t) { Erofs(r); };
  ops.mkdir = [](fuse_req_t r, fuse_ino_t, const char*, mode_t) { Erofs(r); };
  ops.unlink = [](fuse_req_t r, fuse_ino_t, const char*) { Erofs(r); };
  ops.rmdir = [](fuse_req_t r, fuse_ino_t, const char*) { Erofs(r); };
  ops.symlink = [](fuse_req_t r, const char*, fuse_ino_t, const char*) { Erofs(r); };
  ops.rename = [](fuse_req_t r, fuse_ino_t, const char*, fuse_ino_t, const char*, unsigned) {
    Erofs(r);
  };
  ops.link = [](fuse_req_t r, fuse_ino_t, fuse_ino_t, const char*) { Erofs(r); };
  ops.create = [](fuse_req_t r, fuse_ino_t, const char*, mode_t, fuse_file_info*) { Erofs(r); };
  ops.write = [](fuse_req_t r, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*) {
    Erofs(r);
  };
  ops.setxattr = [](fuse_req_t r, fuse_ino_t, const char*, const char*, size_t, int) { Erofs(r); };
  ops.removexattr = [](fuse_req_t r, fuse_ino_t, const char*) { Erofs(r); };
  return ops;
}

}  // namespace

const fuse_lowlevel_ops& Operations() {
  static const fuse_lowlevel_ops ops = MakeOps();
  return ops;
}

}  // namespace stitchfs::fs
