#include "engine/backends/s3/s3_config.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "engine/base/cache_dir.h"
#include "engine/location/s3_address.h"

namespace stitchfs::engine {
namespace {

using Ini = std::map<std::string, std::map<std::string, std::string>>;

std::string Trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == s.npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// `[section]` and `key = value` lines; `#` and `;` start comments. Missing file: empty.
bool ReadIni(const std::string& path, Ini* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line, section;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = Trim(line.substr(1, line.size() - 2));
      (*out)[section];
      continue;
    }
    const size_t eq = line.find('=');
    if (eq != line.npos) (*out)[section][Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
  }
  return true;
}

struct Env {
  const EnvLookup& lookup;
  std::string Get(const char* name) const {
    const char* v = lookup ? lookup(name) : std::getenv(name);
    return v ? v : "";
  }
  std::string Home(const char* file) const {
    const std::string home = Get("HOME");
    return (home.empty() ? "" : home) + "/.aws/" + file;
  }
};

const std::map<std::string, std::string>* Section(const Ini& ini, const std::string& name) {
  auto it = ini.find(name);
  return it == ini.end() ? nullptr : &it->second;
}

std::string Value(const std::map<std::string, std::string>* s, const char* key) {
  if (!s) return "";
  auto it = s->find(key);
  return it == s->end() ? "" : it->second;
}

S3Credentials CredentialsIn(const std::map<std::string, std::string>* s) {
  return {Value(s, "aws_access_key_id"), Value(s, "aws_secret_access_key"),
          Value(s, "aws_session_token"), ""};
}

Status LoadCredentials(const S3Settings& settings, const Env& env, const std::string& profile,
                       const std::map<std::string, std::string>* config_section, S3Config* c) {
  if (!settings.credentials_file.empty()) {
    Ini ini;
    if (!ReadIni(settings.credentials_file, &ini)) {
      return Status::InvalidArgument("cannot read S3 credentials file " +
                                     EscapeForMessage(settings.credentials_file));
    }
    c->credentials = CredentialsIn(Section(ini, profile));
    c->credentials.source = settings.credentials_file + " [" + profile + "]";
    if (c->credentials.present()) return Status::OK();
    return Status::InvalidArgument("S3 credentials file " +
                                   EscapeForMessage(settings.credentials_file) +
                                   " has no profile [" + EscapeForMessage(profile) +
                                   "] with aws_access_key_id and "
                                   "aws_secret_access_key");
  }
  c->credentials = {env.Get("AWS_ACCESS_KEY_ID"), env.Get("AWS_SECRET_ACCESS_KEY"),
                    env.Get("AWS_SESSION_TOKEN"), ""};
  c->credentials.source = "environment";
  if (c->credentials.present()) return Status::OK();
  std::string file = env.Get("AWS_SHARED_CREDENTIALS_FILE");
  if (file.empty()) file = env.Home("credentials");
  Ini ini;
  ReadIni(file, &ini);
  c->credentials = CredentialsIn(Section(ini, profile));
  c->credentials.source = file + " [" + profile + "]";
  if (!c->credentials.present()) {
    c->credentials = CredentialsIn(config_section);
    c->credentials.source = "config [" + profile + "]";
  }
  if (!c->credentials.present()) c->credentials.source = "none (unsigned requests)";
  return Status::OK();
}

Status CacheSize(const S3Settings& settings, const Env& env, S3Config* c) {
  int64_t mb = settings.cache_mb;
  if (const std::string n = env.Get("STITCH_S3_CACHE_MB"); mb < 0 && !n.empty()) {
    char* end = nullptr;
    mb = std::strtoll(n.c_str(), &end, 10);
    if (*end != '\0' || mb < 0) return Status::InvalidArgument("STITCH_S3_CACHE_MB must be >= 0");
  }
  if (mb >= 0) c->block_cache_bytes = static_cast<uint64_t>(mb) << 20;
  const std::string base = DefaultCacheDir();
  c->block_cache_dir = base.empty() ? "" : base + "/s3-blocks";
  return Status::OK();
}

}  // namespace

StatusOr<S3Config> LoadS3Config(const S3Settings& settings, const EnvLookup& lookup) {
  const Env env{lookup};
  S3Config c;
  std::string profile = settings.profile;
  if (profile.empty()) profile = env.Get("AWS_PROFILE");
  if (profile.empty()) profile = "default";
  std::string config_file = env.Get("AWS_CONFIG_FILE");
  if (config_file.empty()) config_file = env.Home("config");
  Ini config;
  ReadIni(config_file, &config);
  const auto* section = Section(config, profile == "default" ? "default" : "profile " + profile);
  RETURN_IF_ERROR(LoadCredentials(settings, env, profile, section, &c));
  const std::pair<std::string, std::string> endpoints[] = {
      {settings.endpoint, "-o s3_endpoint="},
      {env.Get("AWS_ENDPOINT_URL_S3"), "AWS_ENDPOINT_URL_S3"},
      {env.Get("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL"},
      {Value(section, "endpoint_url"), config_file + " [" + profile + "] endpoint_url"}};
  for (const auto& [value, source] : endpoints) {
    if (!c.endpoint.empty() || value.empty()) continue;
    // Refused, not ignored: a secret there would be signed with another key and shown.
    RETURN_IF_ERROR(CheckNoUrlCredentials(value, "the S3 endpoint from " + source));
    c.endpoint = value;
  }
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  for (const std::string& v : {settings.region, env.Get("AWS_REGION"),
                               env.Get("AWS_DEFAULT_REGION"), Value(section, "region")}) {
    if (c.region.empty()) c.region = v;
  }
  RETURN_IF_ERROR(CacheSize(settings, env, &c));
  if (const std::string n = env.Get("STITCH_S3_MAX_ATTEMPTS"); !n.empty()) {
    char* end = nullptr;
    const long v = std::strtol(n.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > 100) {
      return Status::InvalidArgument("STITCH_S3_MAX_ATTEMPTS must be 1..100");
    }
    c.max_attempts = static_cast<int>(v);
  }
  return c;
}

}  // namespace stitchfs::engine
