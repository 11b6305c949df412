#include "fs/options.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "engine/location/location.h"
#include "engine/location/locator.h"
#include "engine/location/s3_address.h"
#include "engine/storage/backup_folder.h"
#include "engine/storage/clickhouse_config.h"

namespace stitchfs::fs {

const char kUsage[] =
    "usage: stitchfs [options] BACKUP MOUNTPOINT\n"
    "       stitchfs [options] STORE MOUNTPOINT\n"
    "Mounts a backup (and its chain of bases), or a folder of backups, read-only at MOUNTPOINT.\n"
    "  -f                 stay in the foreground\n"
    "  -d                 debug output (implies -f)\n"
    "  -s                 single-threaded\n"
    "  -o OPT[,OPT...]    mount options:\n"
    "       noxattr (no extended attributes: ls -l needs no round trips for them),\n"
    "       noverify (files read from start to end are not checked against their checksum),\n"
    "       nomanifest (no hidden .backup at each backup's root: the manifest of that point\n"
    "         in time as one full backup, which ClickHouse's RESTORE reads through the mount),\n"
    "       spin_us=N (poll this long for the next request; default 200, 0 = libfuse's loop),\n"
    "       allow_other, default_permissions (on whenever allow_other is),\n"
    "       uid=N, gid=N, umask=OCTAL (override owners and modes),\n"
    "       base=DIR (the backup's base), disk=NAME:DIR (Disk('NAME', ...) locators),\n"
    "       backups_root=DIR (relative File('...') locators: ClickHouse's first\n"
    "         backups.allowed_path), clickhouse_config=FILE (the server's config.xml, with\n"
    "         its config.d: backups root and disks as the server reads them),\n"
    "       s3_endpoint=URL, s3_region=R, s3_profile=NAME, s3_credentials=FILE (object\n"
    "         storage: BACKUP may be s3://BUCKET/PREFIX or an http(s) URL; FILE is in the\n"
    "         ~/.aws/credentials format; the AWS_* environment is read too),\n"
    "       s3_cache_mb=N (object storage: on-disk block cache; default 1024, 0 = off),\n"
    "       readahead_kb=N (sequential read request size when root; default 1024, 0 = kernel's),\n"
    "       walk_ahead=N (files read ahead of a tree walk such as tar or cp -a, each checked\n"
    "         and put in the page cache; default 64, 0 = off),\n"
    "       share_inodes (stores: a file unchanged between backups has one inode number),\n"
    "       max_backups=N, cache_mb=N, manifest_cache_mb=N (stores: memory bounds; default\n"
    "         32 opened backups kept while idle, 256 MiB for them, 64 MiB of base manifests),\n"
    "       ro, fsname=, subtype=, auto_unmount, nodev, nosuid, noexec, noatime, ...\n"
    "  -h, --help         this help\n"
    "  -V, --version      version\n"
    "See stitchfs(1) for stores, exit codes and extended attributes.\n";

namespace {

// Mount options handed to libfuse or the kernel unchanged.
const std::set<std::string> kPassThrough = {
    "ro",         "auto_unmount", "nodev",   "dev",     "nosuid",   "suid",
    "noexec",     "exec",         "noatime", "atime",   "relatime", "norelatime",
    "nodiratime", "sync",         "async",   "dirsync", "lazytime"};

engine::StatusOr<uint32_t> Number(const std::string& opt, const std::string& v, int base) {
  char* end = nullptr;
  unsigned long n = std::strtoul(v.c_str(), &end, base);
  if (v.empty() || *end != '\0' || n > 0xffffffffUL) {
    return engine::Status::InvalidArgument("bad value for -o " + opt + ": " + v);
  }
  return static_cast<uint32_t>(n);
}

engine::Status MountOption(const std::string& opt, Options* o) {
  const size_t eq = opt.find('=');
  const std::string key = opt.substr(0, eq);
  const std::string val = eq == std::string::npos ? "" : opt.substr(eq + 1);
  if (opt == "allow_other") {
    o->allow_other = o->default_permissions = true;
  } else if (opt == "default_permissions") {
    o->default_permissions = true;
  } else if (key == "uid" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->uid, Number(key, val, 10));
  } else if (key == "gid" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->gid, Number(key, val, 10));
  } else if (key == "umask" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->umask, Number(key, val, 8));
  } else if (opt == "noxattr") {
    o->noxattr = true;
  } else if (opt == "nomanifest") {
    o->backup_manifest = false;
  } else if (opt == "noverify") {
    o->verify_reads = false;
  } else if (key == "spin_us" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->spin_us, Number(key, val, 10));
  } else if (key == "readahead_kb" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->readahead_kb, Number(key, val, 10));
  } else if (key == "walk_ahead" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->walk_ahead, Number(key, val, 10));
  } else if (opt == "share_inodes") {
    o->share_inodes = true;
  } else if (key == "max_backups" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->max_backups, Number(key, val, 10));
    if (o->max_backups == 0) return engine::Status::InvalidArgument("max_backups must be >= 1");
  } else if (key == "cache_mb" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->cache_mb, Number(key, val, 10));
  } else if (key == "manifest_cache_mb" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(o->manifest_cache_mb, Number(key, val, 10));
  } else if (key == "base" && !val.empty()) {
    o->chain.base_override = val;  // Made a location in one spelling once the context is known.
  } else if (key == "disk" && val.find(':') != std::string::npos && val.find(':') > 0) {
    o->disks[val.substr(0, val.find(':'))] = val.substr(val.find(':') + 1);
  } else if (key == "backups_root" && !val.empty()) {
    o->backups_root = val;
  } else if (key == "clickhouse_config" && !val.empty()) {
    o->clickhouse_config = val;
  } else if (key == "s3_endpoint" && !val.empty()) {
    RETURN_IF_ERROR(engine::CheckNoUrlCredentials(val, "-o s3_endpoint="));
    o->s3.endpoint = val;
  } else if (key == "s3_region" && !val.empty()) {
    o->s3.region = val;
  } else if (key == "s3_profile" && !val.empty()) {
    o->s3.profile = val;
  } else if (key == "s3_cache_mb" && eq != std::string::npos) {
    ASSIGN_OR_RETURN(const uint32_t mb, Number(key, val, 10));
    o->s3.cache_mb = mb;
  } else if (key == "s3_credentials" && !val.empty()) {
    o->s3.credentials_file = engine::AbsolutePath(val);  // A file: never a secret in argv.
  } else if ((key == "fsname" || key == "subtype") && !val.empty()) {
    o->fuse_mount_options.push_back(opt);
  } else if (kPassThrough.count(opt)) {
    if (opt != "ro") o->fuse_mount_options.push_back(opt);
  } else if (opt == "rw") {
    return engine::Status::InvalidArgument("stitchfs mounts are read-only; -o rw is not possible");
  } else {
    return engine::Status::InvalidArgument("unknown mount option " + opt);
  }
  return engine::Status::OK();
}

engine::Status OptionList(const std::string& list, Options* o) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) RETURN_IF_ERROR(MountOption(list.substr(start, end - start), o));
    start = end + 1;
  }
  return engine::Status::OK();
}

}  // namespace

engine::StatusOr<Options> ParseOptions(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-f") {
      o.foreground = true;
    } else if (a == "-d" || a == "--debug") {
      o.debug = o.foreground = true;
    } else if (a == "-s") {
      o.single_thread = true;
    } else if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "-V" || a == "--version") {
      o.version = true;
    } else if (a == "-o" && i + 1 < argc) {
      RETURN_IF_ERROR(OptionList(argv[++i], &o));
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2) {
      RETURN_IF_ERROR(OptionList(a.substr(2), &o));
    } else if (!a.empty() && a[0] == '-') {
      return engine::Status::InvalidArgument("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (o.help || o.version) return o;
  if (positional.size() != 2) return engine::Status::InvalidArgument("need BACKUP and MOUNTPOINT");
  o.mountpoint = positional[1];
  std::vector<std::string> warnings;
  ASSIGN_OR_RETURN(o.chain.locators, engine::MakeLocatorContext(o.clickhouse_config, o.backups_root,
                                                                o.disks, &warnings));
  for (const auto& w : warnings) std::fprintf(stderr, "stitchfs: warning: %s\n", w.c_str());
  o.backup = positional[0];  // As given (it names the mount); made a location in main.
  if (engine::LooksLikeLocator(o.backup) || engine::LocationOf(o.backup).in_object_storage()) {
    ASSIGN_OR_RETURN(o.backup, engine::ResolveUserLocation(o.backup, o.chain.locators));
  }
  if (!o.chain.base_override.empty()) {
    ASSIGN_OR_RETURN(o.chain.base_override,
                     engine::ResolveUserLocation(o.chain.base_override, o.chain.locators));
  }
  return o;
}

std::string FuseMountOptions(const Options& o) {
  std::string s = "ro,subtype=stitchfs";
  bool has_fsname = false;
  for (const auto& opt : o.fuse_mount_options) has_fsname |= opt.rfind("fsname=", 0) == 0;
  if (!has_fsname) {
    std::string name;
    for (char c : o.backup) {
      if (c == ',' || c == '\\') name.push_back('\\');
      name.push_back(c);
    }
    s += ",fsname=" + name;
  }
  if (o.allow_other) s += ",allow_other";
  if (o.default_permissions) s += ",default_permissions";
  for (const auto& opt : o.fuse_mount_options) {  // Split on bare commas; libfuse unescapes.
    s += ",";
    for (char c : opt) {
      if (c == ',' || c == '\\') s.push_back('\\');
      s.push_back(c);
    }
  }
  return s;
}

}  // namespace stitchfs::fs
