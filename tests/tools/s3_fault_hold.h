// The `hold` action of s3_fault_proxy: a request kept unanswered while a test acts (kills the
// client, or changes the objects behind the proxy's back), then answered as the test says.
#pragma once

#include <string>

namespace s3fault {

// Writes `body` to PATH.held (whole: written aside, then renamed), then waits until the client
// on `client_fd` goes away (returns "") or PATH.go appears (returns its first word, the file
// removed: what the request is to be answered with).
std::string Hold(int client_fd, const std::string& body, const std::string& path);

}  // namespace s3fault
