// A small HTTP/1.1 server on Boost.Beast: one thread accepts, each connection gets its own
// thread (a bounded number) that reads requests with a body limit and hands them to the
// handler. Handlers may block (waiting for tokens): the engine runs on its own thread, so a
// connection thread only waits and writes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "server/http.hpp"
#include "switchyard/status.hpp"

namespace sy::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  ///< 0: any free port (see HttpServer::port)
  uint64_t max_body = 8u << 20;
  int max_connections = 256;
  int idle_timeout_s = 60;  ///< a keep-alive connection silent this long is closed
};

using Handler = std::function<void(const HttpRequest&, HttpResponder&)>;

class HttpServer {
 public:
  /// Binds and listens; an address in use or not on this machine is an error naming it.
  static Result<std::unique_ptr<HttpServer>> listen(const HttpOptions& o, Handler h);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The port it listens on.
  [[nodiscard]] int port() const;
  /// Accepts connections until stop(), then waits (10 s at most) for the connections to
  /// finish their answers.
  void run();
  /// Makes run() return: no new connections or requests, idle connections closed. Safe
  /// from any thread.
  void stop();

 private:
  struct Impl;
  explicit HttpServer(std::shared_ptr<Impl> impl);
  void drain();
  std::shared_ptr<Impl> impl_;
};

}  // namespace sy::server
