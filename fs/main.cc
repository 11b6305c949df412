// stitchfs: mounts a backup read-only. Order: parse options, open and validate the whole chain
// (so a bad backup is an exit code, not an EIO later), build the tree, mount, daemonize, serve.
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <memory>

#include "engine/backends/routing_storage.h"
#include "engine/base/cache_dir.h"
#include "engine/base/error_table.h"
#include "engine/base/polled_read.h"
#include "engine/base/progress_bar.h"
#include "engine/format/manifest_cache.h"
#include "engine/location/location.h"
#include "engine/location/locator.h"
#include "engine/location/s3_address.h"
#include "engine/read/chain_walk.h"
#include "engine/read/open_resolved.h"
#include "engine/storage/store.h"
#include "fs/backup_view.h"
#include "fs/fuse_ops.h"
#include "fs/options.h"
#include "fs/page_trim.h"
#include "fs/sequential_check.h"
#include "fs/serve_loop.h"
#include "fs/single_view.h"
#include "fs/store_view.h"
#include "fs/walk_ahead.h"

namespace sfs = stitchfs::fs;
namespace eng = stitchfs::engine;

namespace {

// Reads up to this long poll for their pages (PolledRead): random reads and small files; a
// stream's 1 MiB reads sleep (polling through them would take the CPU their copies need).
constexpr uint64_t kPolledReadBytes = 128 << 10;

struct SessionDeleter {
  void operator()(fuse_session* s) const { fuse_session_destroy(s); }
};
struct ArgsDeleter {
  void operator()(fuse_args* a) const { fuse_opt_free_args(a); }
};
struct LoopConfigDeleter {
  void operator()(fuse_loop_config* c) const { fuse_loop_cfg_destroy(c); }
};

// fds 0-2 must be open before any file is, or a data file could become "stdout".
void EnsureStdFds() {
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0) ::open("/dev/null", O_RDWR);
  }
}

void RaiseFdLimit() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
}

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "stitchfs: %s\n", eng::EscapeForMessage(message).c_str());
  return code;
}

// `path` as an absolute path without symlinks, if it is a folder to mount on; else what is
// wrong with it, and for a mount whose daemon died (ENOTCONN) how to clear it.
eng::StatusOr<std::string> MountPoint(const std::string& path) {
  struct stat st;
  char* real = ::realpath(path.c_str(), nullptr);
  const int err = real == nullptr ? errno : ::stat(real, &st) != 0 ? errno : 0;
  std::string out = real ? real : "";
  std::free(real);
  if (err == ENOTCONN) {
    return eng::Status(eng::ErrorCode::kIOError,
                       "mount point " + path +
                           " is a stale mount (the program that served it has ended); clear it "
                           "with: fusermount3 -u " +
                           path,
                       err);
  }
  if (err != 0) return eng::Status::IOError("mount point " + path + " is not a folder", err);
  if (!S_ISDIR(st.st_mode)) {
    return eng::Status(eng::ErrorCode::kIOError, "mount point " + path + " is not a folder",
                       ENOTDIR);
  }
  return out;
}

// The device number of the newest mount at `mountpoint`, from /proc/self/mountinfo. (Not
// stat(): before the loop runs, that would wait forever on our own mount.)
std::string MountDevice(const std::string& mountpoint) {
  std::string dev;
  if (FILE* f = std::fopen("/proc/self/mountinfo", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof(line), f)) {
      char majmin[64], root[4096], point[4096];
      if (std::sscanf(line, "%*s %*s %63s %4095s %4095s", majmin, root, point) == 3 &&
          point == mountpoint) {  // (Paths with spaces are escaped there; they simply miss.)
        dev = majmin;
      }
    }
    std::fclose(f);
  }
  return dev;
}

// Sequential reads reach a FUSE daemon in readahead-sized requests, 128 KiB by default; 1 MiB
// requests cost an eighth of the round trips. The knob is the mount's own bdi, writable by
// root only; elsewhere the default stays (best effort, no error).
void RaiseReadahead(const std::string& mountpoint, unsigned kb) {
  const std::string dev = kb ? MountDevice(mountpoint) : "";
  if (dev.empty()) return;
  if (FILE* f = std::fopen(("/sys/class/bdi/" + dev + "/read_ahead_kb").c_str(), "w")) {
    std::fprintf(f, "%u\n", kb);
    std::fclose(f);
  }
}

int Serve(fuse_session* se, const sfs::Options& o) {
  if (o.spin_us > 0) {
    return sfs::ServeSpinning(se, o.single_thread ? 0 : 15, o.spin_us,
                              sfs::ReleaseThreadReadBuffer);
  }
  if (o.single_thread) return fuse_session_loop(se);
  std::unique_ptr<fuse_loop_config, LoopConfigDeleter> cfg(fuse_loop_cfg_create());
  fuse_loop_cfg_set_clone_fd(cfg.get(), 1);
  fuse_loop_cfg_set_max_threads(cfg.get(), 16);
  // Keep workers (and their read buffers) alive instead of starting threads under load.
  fuse_loop_cfg_set_idle_threads(cfg.get(), 16);
  return fuse_session_loop_mt(se, cfg.get());
}

int Mount(sfs::MountContext& state, const sfs::Options& o, const char* argv0) {
  const std::string opts = sfs::FuseMountOptions(o);
  std::vector<const char*> argv = {argv0, "-o", opts.c_str()};
  if (o.debug) argv.push_back("-d");
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  std::unique_ptr<fuse_args, ArgsDeleter> free_args(&args);  // libfuse may allocate into it.
  std::unique_ptr<fuse_session, SessionDeleter> se(
      fuse_session_new(&args, &sfs::Operations(!o.noxattr), sizeof(fuse_lowlevel_ops), &state));
  if (!se) return Fail(eng::kExitMount, "cannot create the FUSE session (options: " + opts + ")");
  if (fuse_set_signal_handlers(se.get()) != 0)
    return Fail(eng::kExitMount, "cannot set signal handlers");
  if (fuse_session_mount(se.get(), o.mountpoint.c_str()) != 0) {
    fuse_remove_signal_handlers(se.get());
    return Fail(eng::kExitMount, "cannot mount at " + o.mountpoint);
  }
  // After INIT: the kernel sets the readahead from the INIT reply, so raising it earlier is lost.
  state.after_init = [mp = o.mountpoint, kb = o.readahead_kb] { RaiseReadahead(mp, kb); };
  // The mount exists now, so when the parent exits after daemonizing, the folder is ready.
  if (o.foreground)
    std::fprintf(stderr, "stitchfs: serving %s at %s\n", o.backup.c_str(), o.mountpoint.c_str());
  if (fuse_daemonize(o.foreground ? 1 : 0) != 0) {
    fuse_session_unmount(se.get());
    return Fail(eng::kExitMount, "cannot daemonize");
  }
  if (!o.foreground) ::openlog("stitchfs", LOG_PID, LOG_DAEMON);
  // Drops a folder's cached listing (offset 0 to the end) and attributes; a folder the kernel
  // has forgotten already answers ENOENT, which is fine.
  state.listing.Start(
      [s = se.get()](uint64_t dir) { fuse_lowlevel_notify_inval_inode(s, dir, 0, 0); });
  // Started here: the threads of the process before fuse_daemonize are not the daemon's.
  std::unique_ptr<sfs::WalkAhead> walk;
  if (o.walk_ahead > 0) {
    sfs::WalkAheadLimits limits;
    limits.files = o.walk_ahead;
    walk = std::make_unique<sfs::WalkAhead>(*state.ns, limits);
    state.walk = walk.get();
  }
  sfs::PageTrim trim;
  state.trim = &trim;
  const int ret = Serve(se.get(), o);
  state.trim = nullptr;
  state.walk = nullptr;
  walk.reset();
  state.listing.Stop();
  fuse_session_unmount(se.get());
  fuse_remove_signal_handlers(se.get());
  // libfuse returns the number of the signal that ended the loop: a clean, requested exit.
  const bool clean = ret == 0 || ret == SIGTERM || ret == SIGINT || ret == SIGHUP;
  return clean ? eng::kExitOk : eng::kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  EnsureStdFds();
  RaiseFdLimit();
  auto parsed = sfs::ParseOptions(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "stitchfs: %s\n%s", parsed.status().message().c_str(), sfs::kUsage);
    return eng::kExitUsage;
  }
  sfs::Options& o = *parsed;
  if (o.help) return std::printf("%s", sfs::kUsage), 0;
  if (o.version) return std::printf("stitchfs %s\n", STITCHFS_VERSION), 0;
  // Before any cache is opened, while stderr is still the user's.
  if (const std::string& w = eng::CheckDefaultCacheDir(); !w.empty()) {
    std::fprintf(stderr, "stitchfs: warning: %s\n", w.c_str());
  }
  auto mountpoint = MountPoint(o.mountpoint);
  if (!mountpoint.ok()) return Fail(eng::kExitMount, mountpoint.status().message());
  o.mountpoint = *mountpoint;  // Absolute: the daemon changes folder, unmount needs the path.
  if (eng::LocationOf(o.backup).in_object_storage()) {
    o.backup = eng::NormalLocation(o.backup);
  } else if (char* real_backup = ::realpath(o.backup.c_str(), nullptr)) {
    o.backup = real_backup;  // The daemon changes folder; a store is read after that.
    std::free(real_backup);
  }
  if (o.spin_us > 0) {
    // A serving thread that polls for its next request polls for a small read's pages too.
    eng::SetReadPolling(
        {.max_bytes = kPolledReadBytes, .budget = std::chrono::microseconds(o.spin_us)});
  }
  sfs::MountContext state;
  state.foreground = o.foreground;
  state.verify_reads = o.verify_reads;
  sfs::AttrOptions attr;
  attr.uid = o.uid;
  attr.gid = o.gid;
  attr.umask = o.umask;
  attr.backup_manifest = o.backup_manifest;
  o.chain.cache = eng::ManifestCache::Default();  // The per-user cache.
  // Where backups are read from: folders here, or object storage for S3 addresses.
  o.chain.storage = eng::RoutingStorage::Create(/*max_open_files=*/0, o.s3,
                                                // Archives indexed while it opens, as bars.
                                                eng::TerminalProgress("index"));
  auto manifest = o.chain.storage->StatManifest(o.backup);
  if (!manifest.ok())
    return Fail(eng::ExitCodeFor(manifest.status()), manifest.status().ToString());
  if (manifest->has_value()) {
    if (o.share_inodes) {
      return Fail(eng::kExitUsage, "-o share_inodes needs a store of backups, not one backup");
    }
    auto top = eng::OpenBackup(o.backup, o.chain);
    if (!top.ok()) return Fail(eng::ExitCodeFor(top.status()), top.status().ToString());
    // The tree needs the top's manifest alone: built on another core while the chain resolves
    // (the thread ends before the daemon forks).
    auto table = std::async(std::launch::async,
                            [m = *top] { return sfs::InodeTable::Build(m->manifest()); });
    auto backup = eng::OpenResolved(*top, o.chain);
    if (!backup.ok()) return Fail(eng::ExitCodeFor(backup.status()), backup.status().ToString());
    attr.default_mtime_sec = eng::CivilToEpochSeconds((*backup)->top().header().time);
    sfs::MountContext* ctx = &state;
    state.ns = std::make_unique<sfs::SingleView>(
        std::make_shared<const sfs::BackupView>(*backup, table.get(), attr), o.chain, attr,
        [ctx](const std::string& line) { sfs::LogError(*ctx, line); });
    state.answer_opens = false;
#ifdef __GLIBC__
    ::malloc_trim(0);  // Return what building the tree used and freed (a few MB per million).
#endif
  } else {
    auto scan = o.chain.storage->ScanStore(o.backup);
    if (!scan.ok() && scan.status().code() != eng::ErrorCode::kBackupNotFound) {
      return Fail(eng::ExitCodeFor(scan.status()), scan.status().ToString());
    }
    if (!scan.ok()) {
      return Fail(eng::kExitNotFound,
                  "BACKUP_NOT_FOUND: " + o.backup + " is neither a backup nor a store of backups");
    }
    sfs::StoreOptions so;
    so.chain = o.chain;
    so.chain.backups =
        std::make_shared<eng::BackupCache>(size_t{o.manifest_cache_mb} * 1024 * 1024);
    so.attr = attr;
    so.share_inodes = o.share_inodes;
    so.max_open_backups = o.max_backups;
    so.max_open_bytes = size_t{o.cache_mb} << 20;
    sfs::MountContext* ctx = &state;
    state.ns = std::make_unique<sfs::StoreView>(
        o.backup, so, [ctx](const std::string& line) { sfs::LogError(*ctx, line); });
  }
  try {
    return Mount(state, o, argv[0]);
  } catch (const std::bad_alloc&) {
    return Fail(eng::kExitFailure, "out of memory");
  }
}
