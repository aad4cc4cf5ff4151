#include "server/openai/endpoints.hpp"

#include <ctime>

#include "chat/prompt.hpp"
#include "server/openai/generate.hpp"
#include "server/openai/output.hpp"
#include "server/openai/sampling.hpp"

namespace sy::server::openai {
namespace {

using json = nlohmann::ordered_json;

ApiError unknown_model(const std::string& name) {
  return {404, "The model '" + name + "' does not exist or you do not have access to it.", "invalid_request_error", "model",
          "model_not_found"};
}

ApiError no_tokenizer(const ServeContext& ctx) {
  return {400, "This model has no tokenizer (" + ctx.runtime->tokenizer_note + "); set model.tokenizer in the pipeline.",
          "invalid_request_error", "", "no_tokenizer"};
}

json model_json(const ServeContext& ctx) {
  return {{"id", ctx.settings.model_id},
          {"object", "model"},
          {"created", 0},
          {"owned_by", "switchyard"},
          {"meta",
           {{"pipeline", ctx.settings.pipeline_name},
            {"n_ctx", ctx.n_ctx},
            {"n_vocab", ctx.runtime->engine->n_vocab()},
            {"slots", ctx.scheduler->config().slots}}}};
}

// Reads the body and the common fields; false after answering an error.
bool read_request(ServeContext& ctx, const HttpRequest& req, HttpResponder& res, bool chat, GenerationRequest& r) {
  nlohmann::json body;
  if (auto e = parse_body(req.body, body)) return send_error(&ctx, res, *e), false;
  if (auto e = chat ? parse_chat_request(body, r) : parse_completion_request(body, r)) return send_error(&ctx, res, *e), false;
  if (!r.model.empty() && r.model != ctx.settings.model_id) return send_error(&ctx, res, unknown_model(r.model)), false;
  return true;
}

bool sampling_for(ServeContext& ctx, HttpResponder& res, Generation& g) {
  if (auto e = apply_sampling(g.req.sampling, ctx.sampling, ctx.schemas, ctx.runtime->engine->n_vocab(), g.sampling))
    return send_error(&ctx, res, *e), false;
  return true;
}

}  // namespace

void chat_completions(ServeContext& ctx, const HttpRequest& req, HttpResponder& res) {
  Generation g;
  g.endpoint = Endpoint::chat;
  if (!read_request(ctx, req, res, true, g.req)) return;
  const tok::Tokenizer* tk = ctx.runtime->tokenizer.get();
  if (!tk) return send_error(&ctx, res, no_tokenizer(ctx));
  if (!ctx.chat_template)
    return send_error(&ctx, res, {400, "This model has no chat template (" + ctx.template_note + "); use /v1/completions, or set model.chat_template in the pipeline.",
                                  "invalid_request_error", "messages", "no_chat_template"});
  const bool tools = g.req.tool_choice != "none" && g.req.tools.is_array();
  auto text = chat::render_openai_chat(*ctx.chat_template, g.req.messages, tools ? g.req.tools : json(nullptr),
                                       g.req.template_kwargs, true, tk);
  if (!text)
    return send_error(&ctx, res, {400, "The chat template refused the messages: " + text.status().message(),
                                  "invalid_request_error", "messages", "template_error"});
  g.prompt = chat::tokenize_chat(*tk, *text);
  g.number = ctx.next_id++;
  ChatOutputOptions oo;
  oo.template_source = ctx.template_source;
  oo.prompt_text = *text;
  if (tools) oo.tools = nlohmann::json::parse(g.req.tools.dump());
  oo.call_id_prefix = "call_" + std::to_string(g.number) + "_";
  g.shaper = chat_output(oo);
  if (!sampling_for(ctx, res, g)) return;
  run_generation(ctx, res, std::move(g));
}

void completions(ServeContext& ctx, const HttpRequest& req, HttpResponder& res) {
  Generation g;
  g.endpoint = Endpoint::completion;
  if (!read_request(ctx, req, res, false, g.req)) return;
  const tok::Tokenizer* tk = ctx.runtime->tokenizer.get();
  if (const auto* text = std::get_if<std::string>(&g.req.prompt)) {
    if (!tk) return send_error(&ctx, res, no_tokenizer(ctx));
    g.prompt = tk->encode(*text, true, true);
    g.prompt_text = *text;
  } else {
    g.prompt = std::get<std::vector<int32_t>>(g.req.prompt);
    for (int32_t id : g.prompt)
      if (id >= ctx.runtime->engine->n_vocab())
        return send_error(&ctx, res, bad_field("prompt", "Token " + std::to_string(id) + " is outside the vocabulary (0.." +
                                                             std::to_string(ctx.runtime->engine->n_vocab() - 1) + ")."));
    if (tk) g.prompt_text = tk->decode(g.prompt);
  }
  g.number = ctx.next_id++;
  g.shaper = plain_output();
  if (!sampling_for(ctx, res, g)) return;
  run_generation(ctx, res, std::move(g));
}

void models(ServeContext& ctx, const HttpRequest&, HttpResponder& res) {
  if (ctx.metrics) ctx.metrics->http_status(200);
  res.send(200, "application/json", dump(json{{"object", "list"}, {"data", json::array({model_json(ctx)})}}));
}

void model(ServeContext& ctx, const HttpRequest& req, HttpResponder& res) {
  const std::string name = req.path.substr(std::string("/v1/models/").size());
  if (name != ctx.settings.model_id) return send_error(&ctx, res, unknown_model(name));
  if (ctx.metrics) ctx.metrics->http_status(200);
  res.send(200, "application/json", dump(model_json(ctx)));
}

void metrics(ServeContext& ctx, const HttpRequest&, HttpResponder& res) {
  if (ctx.metrics) ctx.metrics->http_status(200);
  res.send(200, "text/plain; version=0.0.4; charset=utf-8", ctx.metrics ? ctx.metrics->render() : std::string());
}

void tokenize(ServeContext& ctx, const HttpRequest& req, HttpResponder& res) {
  nlohmann::json body;
  if (auto e = parse_body(req.body, body)) return send_error(&ctx, res, *e);
  const tok::Tokenizer* tk = ctx.runtime->tokenizer.get();
  if (!tk) return send_error(&ctx, res, no_tokenizer(ctx));
  if (!body.is_object()) return send_error(&ctx, res, {400, "The request body must be a JSON object.", "invalid_request_error", "", "invalid_body"});
  // llama-server names the text "content", vLLM "prompt"; vLLM also takes chat messages.
  std::vector<int32_t> ids;
  bool add_special = body.value("add_special", true);
  if (body.contains("messages")) {
    GenerationRequest r;
    if (auto e = parse_chat_request(body, r)) return send_error(&ctx, res, *e);
    if (!ctx.chat_template) return send_error(&ctx, res, bad_field("messages", "This model has no chat template."));
    auto text = chat::render_openai_chat(*ctx.chat_template, r.messages, r.tools, r.template_kwargs,
                                         body.value("add_generation_prompt", true), tk);
    if (!text) return send_error(&ctx, res, bad_field("messages", "The chat template refused the messages: " + text.status().message()));
    ids = chat::tokenize_chat(*tk, *text);
  } else {
    const char* key = body.contains("content") ? "content" : "prompt";
    if (!body.contains(key) || !body[key].is_string())
      return send_error(&ctx, res, bad_field("content", "Give the text to tokenize as 'content' (or 'prompt'), a string."));
    if (body.contains("add_special") && !body["add_special"].is_boolean())
      return send_error(&ctx, res, bad_field("add_special", "'add_special' must be a boolean."));
    ids = tk->encode(body[key].get<std::string>(), add_special, true);
  }
  json out{{"tokens", ids}, {"count", ids.size()}, {"max_model_len", ctx.n_ctx}};
  if (body.value("with_pieces", false)) {
    json pieces = json::array();
    for (int32_t id : ids) pieces.push_back({{"id", id}, {"piece", tk->piece(id)}});
    out["tokens"] = pieces;
  }
  if (ctx.metrics) ctx.metrics->http_status(200);
  res.send(200, "application/json", dump(out));
}

void detokenize(ServeContext& ctx, const HttpRequest& req, HttpResponder& res) {
  nlohmann::json body;
  if (auto e = parse_body(req.body, body)) return send_error(&ctx, res, *e);
  const tok::Tokenizer* tk = ctx.runtime->tokenizer.get();
  if (!tk) return send_error(&ctx, res, no_tokenizer(ctx));
  if (!body.is_object() || !body.contains("tokens") || !body["tokens"].is_array())
    return send_error(&ctx, res, bad_field("tokens", "Give the token ids to detokenize as 'tokens', an array of integers."));
  std::vector<int32_t> ids;
  for (const auto& t : body["tokens"]) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= tk->n_vocab())
      return send_error(&ctx, res, bad_field("tokens", "'tokens' must hold ids from 0 to " + std::to_string(tk->n_vocab() - 1) + "."));
    ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  const std::string text = tk->decode(ids);
  if (ctx.metrics) ctx.metrics->http_status(200);
  res.send(200, "application/json", dump(json{{"content", text}, {"prompt", text}}));
}

}  // namespace sy::server::openai
