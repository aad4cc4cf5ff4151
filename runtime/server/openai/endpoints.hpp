// The handlers behind each route (server/api.cpp routes to them, after authorization).
#pragma once

#include "server/context.hpp"
#include "server/http.hpp"

namespace sy::server::openai {

void chat_completions(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);
void completions(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);
void models(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);
void model(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);
void metrics(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);
void tokenize(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);
void detokenize(ServeContext& ctx, const HttpRequest& req, HttpResponder& res);

}  // namespace sy::server::openai
