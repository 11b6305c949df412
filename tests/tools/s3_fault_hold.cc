#include "s3_fault_hold.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace s3fault {
namespace {

bool WriteWhole(const std::string& path, const std::string& body) {
  const std::string aside = path + ".tmp";
  {
    std::ofstream out(aside, std::ios::binary | std::ios::trunc);
    out << body;
    if (!out.flush()) return false;
  }
  return std::rename(aside.c_str(), path.c_str()) == 0;
}

// True once the peer has closed its side (or the socket failed).
bool ClientGone(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 20) <= 0) return false;
  if (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) return true;
  char c;
  return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace

std::string Hold(int client_fd, const std::string& body, const std::string& path) {
  if (!WriteWhole(path + ".held", body)) std::perror("s3_fault_proxy: hold");
  const std::string go = path + ".go";
  while (!ClientGone(client_fd)) {
    std::ifstream in(go);
    if (!in) continue;
    std::string word;
    in >> word;
    std::remove(go.c_str());
    return word;
  }
  return "";
}

}  // namespace s3fault
