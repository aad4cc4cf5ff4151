#include "server/api.hpp"

#include "server/openai/endpoints.hpp"
#include "server/openai/generate.hpp"

namespace sy::server {
namespace {

// Adds the CORS headers to every answer of a request from an allowed origin.
class CorsResponder final : public HttpResponder {
 public:
  CorsResponder(HttpResponder& inner, std::string origin) : inner_(inner), origin_(std::move(origin)) {}
  void send(int status, std::string_view type, std::string body, const Headers& extra) override {
    inner_.send(status, type, std::move(body), with(extra));
  }
  bool begin_stream(int status, std::string_view type, const Headers& extra) override {
    return inner_.begin_stream(status, type, with(extra));
  }
  bool write(std::string_view data) override { return inner_.write(data); }
  void end_stream() override { inner_.end_stream(); }
  bool client_gone() override { return inner_.client_gone(); }

 private:
  Headers with(Headers h) const {
    h["Access-Control-Allow-Origin"] = origin_;
    h["Vary"] = "Origin";
    return h;
  }
  HttpResponder& inner_;
  std::string origin_;
};

}  // namespace

bool key_matches(const std::string& key, const std::vector<std::string>& keys) {
  bool any = false;
  for (const auto& k : keys) {
    // Every byte of the longer one is looked at, whatever matches.
    const size_t n = std::max(k.size(), key.size());
    unsigned diff = static_cast<unsigned>(k.size() ^ key.size());
    for (size_t i = 0; i < n; ++i) {
      const auto a = static_cast<unsigned char>(i < k.size() ? k[i] : 0);
      const auto b = static_cast<unsigned char>(i < key.size() ? key[i] : 0);
      diff |= static_cast<unsigned>(a ^ b);
    }
    any |= diff == 0;
  }
  return any;
}

Api::Api(ServerSettings settings, std::string page) : settings_(std::move(settings)), page_(std::move(page)) {}

bool Api::authorized(const HttpRequest& req) const {
  if (settings_.api_keys.empty()) return true;
  std::string auth = req.header("authorization");
  const std::string bearer = "Bearer ";
  if (auth.rfind(bearer, 0) == 0) auth = auth.substr(bearer.size());
  else if (auth.empty()) auth = req.header("x-api-key");
  else auth.clear();
  return !auth.empty() && key_matches(auth, settings_.api_keys);
}

std::string Api::allowed_origin(const HttpRequest& req) const {
  const std::string origin = req.header("origin");
  if (origin.empty()) return {};
  for (const auto& o : settings_.cors_origins)
    if (o == "*" || o == origin) return origin;
  return {};
}

void Api::handle(const HttpRequest& req, HttpResponder& raw) {
  ServeContext* ctx = ctx_.load();
  const std::string origin = allowed_origin(req);
  CorsResponder cors(raw, origin);
  HttpResponder& res = origin.empty() ? raw : static_cast<HttpResponder&>(cors);
  if (req.method == "OPTIONS") {
    if (origin.empty())
      return openai::send_error(ctx, res, {405, "Cross-origin requests are not allowed by this server (server.cors_origins).",
                                           "invalid_request_error", "", "cors_not_allowed"});
    return res.send(204, "text/plain", "",
                    {{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                     {"Access-Control-Allow-Headers", "Authorization, Content-Type, X-Api-Key"},
                     {"Access-Control-Max-Age", "600"}});
  }
  if (req.method == "GET" && (req.path == "/" || req.path == "/index.html"))
    return res.send(200, "text/html; charset=utf-8", page_, {{"Cache-Control", "no-cache"}});
  if (req.path == "/health") {
    if (!ctx)
      return openai::send_error(nullptr, res, {503, "Loading model", "unavailable_error", "", "loading"}, {{"Retry-After", "1"}});
    if (ctx->metrics) ctx->metrics->http_status(200);
    return res.send(200, "application/json", "{\"status\":\"ok\"}");
  }
  if (!authorized(req))
    return openai::send_error(ctx, res,
                              {401, "Incorrect API key provided. Send it as 'Authorization: Bearer KEY'.",
                               "invalid_request_error", "", "invalid_api_key"},
                              {{"WWW-Authenticate", "Bearer"}});
  if (!ctx)
    return openai::send_error(nullptr, res, {503, "Loading model", "unavailable_error", "", "loading"}, {{"Retry-After", "1"}});
  route(*ctx, req, res);
}

void Api::route(ServeContext& ctx, const HttpRequest& req, HttpResponder& res) {
  struct Route {
    const char* method;
    const char* path;
    void (*fn)(ServeContext&, const HttpRequest&, HttpResponder&);
  };
  static const Route routes[] = {
      {"POST", "/v1/chat/completions", openai::chat_completions},
      {"POST", "/v1/completions", openai::completions},
      {"GET", "/v1/models", openai::models},
      {"GET", "/metrics", openai::metrics},
      {"POST", "/tokenize", openai::tokenize},
      {"POST", "/detokenize", openai::detokenize},
  };
  bool path_known = false;
  for (const auto& r : routes) {
    if (req.path != r.path) continue;
    path_known = true;
    if (req.method == r.method) return r.fn(ctx, req, res);
  }
  if (req.method == "GET" && req.path.rfind("/v1/models/", 0) == 0) return openai::model(ctx, req, res);
  if (path_known)
    return openai::send_error(&ctx, res, {405, "Method " + req.method + " is not allowed for " + req.path + ".",
                                          "invalid_request_error", "", "method_not_allowed"});
  openai::send_error(&ctx, res, {404, "Unknown request URL: " + req.method + " " + req.path + ". Please check the URL for typos.",
                                 "invalid_request_error", "", "unknown_url"});
}

}  // namespace sy::server
