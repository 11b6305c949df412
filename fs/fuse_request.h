// What every FUSE handler uses to serve one request (fs/fuse_ops.cc, fs/fuse_read.cc): the
// mount's context and namespace, the one catch site, and error replies through the one table.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <cerrno>
#include <cstdint>
#include <mutex>
#include <new>

#include "engine/base/error_table.h"
#include "fs/namespace.h"
#include "fs/page_trim.h"

namespace stitchfs::fs {

inline MountContext& Ctx(fuse_req_t req) {
  return *static_cast<MountContext*>(fuse_req_userdata(req));
}
inline const Namespace& Ns(fuse_req_t req) { return *Ctx(req).ns; }
// The calling thread (the kernel sends its thread id as the pid): a path walk's requests come
// from one thread.
inline uint64_t Caller(fuse_req_t req) { return static_cast<uint64_t>(fuse_req_ctx(req)->pid); }

// Runs `fn`, which must reply; if it throws, replies ENOMEM or EIO (the one catch site).
template <typename Fn>
void Guard(fuse_req_t req, Fn fn) {
  try {
    MountContext& ctx = Ctx(req);
    if (ctx.after_init) std::call_once(ctx.after_init_once, ctx.after_init);
    if (ctx.trim != nullptr) ctx.trim->Busy();
    fn();
  } catch (const std::bad_alloc&) {
    fuse_reply_err(req, ENOMEM);
  } catch (...) {
    LogError(Ctx(req), "internal error: unexpected exception");
    fuse_reply_err(req, EIO);
  }
}

// Replies with the errno of `s` (engine::ErrnoFor, the one table), logging it when it is EIO.
inline void ReplyError(fuse_req_t req, const engine::Status& s) {
  const int err = engine::ErrnoFor(s);
  if (err == EIO || err == EACCES) LogError(Ctx(req), s.ToString());  // (EACCES: storage.)
  fuse_reply_err(req, err);
}

}  // namespace stitchfs::fs
