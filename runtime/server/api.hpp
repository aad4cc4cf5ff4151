// The routes of `switchyard serve`: OpenAI's /v1/chat/completions, /v1/completions and
// /v1/models, plus /health, /metrics, /tokenize, /detokenize and the chat page at /. The
// listener starts before the model loads, so /health can answer 503 meanwhile; API keys
// and CORS are checked here, before any handler reads the body.
#pragma once

#include <atomic>
#include <string>

#include "server/context.hpp"
#include "server/http.hpp"

namespace sy::server {

class Api {
 public:
  /// `page`: the chat page's HTML.
  Api(ServerSettings settings, std::string page);

  /// The model is up: requests are served from `ctx` from now on (it must outlive the Api's use).
  void set_ready(ServeContext* ctx) { ctx_.store(ctx); }
  /// Handles one request (any connection thread).
  void handle(const HttpRequest& req, HttpResponder& res);

 private:
  bool authorized(const HttpRequest& req) const;
  [[nodiscard]] std::string allowed_origin(const HttpRequest& req) const;
  void route(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);

  ServerSettings settings_;
  std::string page_;
  std::atomic<ServeContext*> ctx_{nullptr};
};

/// True when `key` equals one of `keys`; the time taken does not depend on where they differ.
bool key_matches(const std::string& key, const std::vector<std::string>& keys);

}  // namespace sy::server
