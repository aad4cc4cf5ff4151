#include "server/http_server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "log/log.hpp"

namespace sy::server {
namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

std::shared_ptr<spdlog::logger> logger() { return log::get("http"); }

std::string error_json(const std::string& message, const std::string& type, const std::string& code) {
  // The OpenAI error shape, written by hand: these answers come before any handler runs.
  std::string m;
  for (char c : message) {
    if (c == '"' || c == '\\') m += '\\';
    m += c;
  }
  return "{\"error\":{\"message\":\"" + m + "\",\"type\":\"" + type + "\",\"param\":null,\"code\":\"" + code + "\"}}";
}

class Connection final : public HttpResponder {
 public:
  explicit Connection(tcp::socket s) : sock_(std::move(s)) {}

  void send(int status, std::string_view content_type, std::string body, const Headers& extra) override {
    http::response<http::string_body> res{static_cast<http::status>(status), 11};
    res.set(http::field::server, "switchyard");
    res.set(http::field::content_type, std::string(content_type));
    for (const auto& [k, v] : extra) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.body() = std::move(body);
    res.prepare_payload();
    boost::system::error_code ec;
    http::write(sock_, res, ec);
    if (ec) keep_alive_ = false;
    answered_ = true;
  }

  bool begin_stream(int status, std::string_view content_type, const Headers& extra) override {
    http::response<http::empty_body> res{static_cast<http::status>(status), 11};
    res.set(http::field::server, "switchyard");
    res.set(http::field::content_type, std::string(content_type));
    res.set(http::field::cache_control, "no-cache");
    for (const auto& [k, v] : extra) res.set(k, v);
    res.keep_alive(keep_alive_);
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    boost::system::error_code ec;
    http::write_header(sock_, sr, ec);
    answered_ = true;
    if (ec) keep_alive_ = false;
    return !ec;
  }

  bool write(std::string_view data) override {
    if (data.empty()) return true;
    boost::system::error_code ec;
    net::write(sock_, http::make_chunk(net::const_buffer(data.data(), data.size())), ec);
    if (ec) keep_alive_ = false;
    return !ec;
  }

  void end_stream() override {
    boost::system::error_code ec;
    net::write(sock_, http::make_chunk_last(), ec);
    if (ec) keep_alive_ = false;
  }

  bool client_gone() override {
    pollfd p{sock_.native_handle(), POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    char c;
    return ::recv(sock_.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }

  void serve(const Handler& handler, const HttpOptions& o, const std::atomic<bool>& stopping) {
    timeval tv{o.idle_timeout_s, 0};
    ::setsockopt(sock_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    boost::beast::flat_buffer buf;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(o.max_body);
      parser.header_limit(64 * 1024);
      boost::system::error_code ec;
      http::read(sock_, buf, parser, ec);
      if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset) return;
      keep_alive_ = true;
      answered_ = false;
      if (ec == http::error::body_limit) {
        keep_alive_ = false;
        send(413, "application/json",
             error_json("the request body is larger than the server's limit of " + std::to_string(o.max_body) +
                            " bytes (--max-body)",
                        "invalid_request_error", "request_too_large"),
             {});
        return;
      }
      if (ec) {
        // A timeout or garbage: answer what can be answered, then close.
        if (ec != net::error::would_block && ec != net::error::try_again && ec != net::error::timed_out && buf.size() > 0) {
          keep_alive_ = false;
          send(400, "application/json", error_json("malformed HTTP request: " + ec.message(), "invalid_request_error", "bad_http"),
               {});
        }
        return;
      }
      auto& msg = parser.get();
      HttpRequest req;
      req.method = std::string(msg.method_string());
      const std::string target(msg.target());
      const auto q = target.find('?');
      req.path = target.substr(0, q);
      req.query = q == std::string::npos ? "" : target.substr(q + 1);
      for (const auto& f : msg) {
        std::string name(f.name_string());
        for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        req.headers[name] = std::string(f.value());
      }
      req.body = std::move(msg.body());
      boost::system::error_code rec;
      const auto ep = sock_.remote_endpoint(rec);
      if (!rec) req.remote = ep.address().to_string();
      keep_alive_ = msg.keep_alive();
      if (stopping) {
        keep_alive_ = false;
        send(503, "application/json", error_json("the server is shutting down", "server_error", "shutting_down"), {});
        break;
      }
      handler(req, *this);
      if (!answered_) send(500, "application/json", error_json("the handler gave no answer", "server_error", "internal"), {});
      if (!keep_alive_) break;
    }
    boost::system::error_code ec;
    sock_.shutdown(tcp::socket::shutdown_send, ec);
  }

 private:
  tcp::socket sock_;
  bool keep_alive_ = true;
  bool answered_ = false;
};

}  // namespace

struct HttpServer::Impl {
  HttpOptions opts;
  Handler handler;
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::condition_variable cv;
  int connections = 0;
  std::set<int> fds;  // live connections' sockets, shut down for reading by stop()
};

HttpServer::HttpServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  stop();
  drain();
}

Result<std::unique_ptr<HttpServer>> HttpServer::listen(const HttpOptions& o, Handler h) {
  auto impl = std::make_shared<Impl>();
  impl->opts = o;
  impl->handler = std::move(h);
  boost::system::error_code ec;
  const auto addr = net::ip::make_address(o.host, ec);
  if (ec) return error::invalid_argument("'" + o.host + "' is not an IP address to listen on (server.host / --host)");
  const tcp::endpoint ep{addr, static_cast<unsigned short>(o.port)};
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return error::unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message() +
                              (ec == net::error::address_in_use ? "; another server uses the port: pick another with --port" : ""));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

int HttpServer::port() const {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

void HttpServer::run() {
  auto& m = *impl_;
  const std::shared_ptr<Impl> keep = impl_;
  while (!m.stopping) {
    // Poll, so stop() is seen within a fraction of a second without closing under accept().
    pollfd p{m.acceptor.native_handle(), POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    boost::system::error_code ec;
    tcp::socket sock{m.io};
    m.acceptor.accept(sock, ec);
    if (ec) continue;
    {
      std::lock_guard lk(m.mu);
      if (m.connections >= m.opts.max_connections) {
        Connection c(std::move(sock));
        c.send(503, "application/json",
               error_json("the server has " + std::to_string(m.opts.max_connections) + " connections open; retry later",
                          "server_error", "too_many_connections"),
               {{"Retry-After", "1"}, {"Connection", "close"}});
        continue;
      }
      ++m.connections;
      m.fds.insert(sock.native_handle());
    }
    // The thread shares the state, so a connection outliving the server object stays safe.
    std::thread([keep, s = std::move(sock)]() mutable {
      Impl& im = *keep;
      const int fd = s.native_handle();
      try {
        Connection c(std::move(s));
        c.serve(im.handler, im.opts, im.stopping);
      } catch (const std::exception& e) {
        logger()->error("connection ended by an error: {}", e.what());
      }
      std::lock_guard lk(im.mu);
      im.fds.erase(fd);
      --im.connections;
      im.cv.notify_all();
    }).detach();
  }
  drain();
}

void HttpServer::stop() {
  if (!impl_) return;
  auto& m = *impl_;
  m.stopping = true;
  // Idle keep-alive connections wake up and close; busy ones finish their answer.
  std::lock_guard lk(m.mu);
  for (int fd : m.fds) ::shutdown(fd, SHUT_RD);
}

void HttpServer::drain() {
  auto& m = *impl_;
  std::unique_lock lk(m.mu);
  m.cv.wait_for(lk, std::chrono::seconds(10), [&] { return m.connections == 0; });
  boost::system::error_code ec;
  m.acceptor.close(ec);
}

}  // namespace sy::server
