// A `gguflow serve` process for tests: started on a free loopback port (--port 0; the port is
// read from its "listening on" line), stopped with SIGTERM or killed when the test ends.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gguflow::test {

class ServerProcess {
 public:
  // Starts `gguflow serve --port 0 ARGS...` and waits (up to 60 s) until it listens. Fails the
  // test (ADD_FAILURE) and leaves port() 0 when it does not come up; log() then says why.
  explicit ServerProcess(const std::vector<std::string>& args);
  ~ServerProcess();  // SIGKILL if still running
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  std::string log() const;  // its stderr so far

  // Sends `signal` and waits up to `timeout_s` for the exit; the exit status, or nullopt when
  // it did not exit in time (or died of a signal: then -signal).
  std::optional<int> stop(int signal, double timeout_s);

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path log_path_;
};

// An HTTP/1.1 request over a plain socket, for what a client library hides: a stream read
// partly and then dropped. Returns the connected socket after sending; -1 on failure.
int send_raw_request(int port, const std::string& method, const std::string& path,
                     const std::string& body, const std::string& extra_headers = "");
// Reads from `fd` until `needle` has arrived (or EOF / timeout_s); returns everything read.
std::string read_until(int fd, const std::string& needle, double timeout_s);

}  // namespace gguflow::test
