// The HTTP layer the API handlers see: a parsed request and a responder that answers it
// once, either whole or as a stream of chunks (server-sent events). The Beast server behind
// it (http_server.cpp) is the only code that touches sockets.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace sy::server {

struct HttpRequest {
  std::string method;  ///< "GET", "POST", ...
  std::string path;    ///< without the query
  std::string query;
  std::map<std::string, std::string> headers;  ///< names in lower case
  std::string body;
  std::string remote;  ///< the peer's address

  /// A header's value, or "" when absent.
  [[nodiscard]] std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

using Headers = std::map<std::string, std::string>;

class HttpResponder {
 public:
  virtual ~HttpResponder() = default;
  /// Answers with a whole body.
  virtual void send(int status, std::string_view content_type, std::string body, const Headers& extra = {}) = 0;
  /// Starts a streamed answer (chunked transfer); false when the client is gone.
  virtual bool begin_stream(int status, std::string_view content_type, const Headers& extra = {}) = 0;
  /// Writes one piece of a streamed answer; false when the client is gone.
  virtual bool write(std::string_view data) = 0;
  /// Ends a streamed answer.
  virtual void end_stream() = 0;
  /// True when the client closed its side of the connection (checked without blocking).
  [[nodiscard]] virtual bool client_gone() = 0;
};

}  // namespace sy::server
