#include "server/openai/generate.hpp"

#include <ctime>

#include "serving/event_queue.hpp"

namespace sy::server::openai {
namespace {

using json = nlohmann::ordered_json;
using namespace std::chrono_literals;

json usage_json(const serving::Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

std::string finish_reason(const std::string& r, bool tool_calls) {
  if (r == "context") return "length";
  if (r == "eos") return tool_calls ? "tool_calls" : "stop";
  if (r == "stop" && tool_calls) return "tool_calls";
  return r;
}

ApiError error_of(const Status& st) {
  switch (st.code()) {
    case StatusCode::unavailable: return {408, st.message(), "timeout_error", "", "request_timeout"};
    case StatusCode::out_of_range: return {400, st.message(), "invalid_request_error", "messages", "context_length_exceeded"};
    case StatusCode::exhausted: return {429, st.message(), "rate_limit_error", "", "queue_full"};
    case StatusCode::invalid_argument: return {400, st.message(), "invalid_request_error", "", "invalid_value"};
    default: return {500, st.message(), "server_error", "", "internal_error"};
  }
}

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

class Answer {
 public:
  Answer(ServeContext& ctx, HttpResponder& res, Generation& g)
      : ctx_(ctx), res_(res), g_(g), tok_(ctx.runtime->tokenizer.get()),
        id_(std::string(g.endpoint == Endpoint::chat ? "chatcmpl-" : "cmpl-") + std::to_string(g.number)),
        created_(static_cast<int64_t>(std::time(nullptr))) {}

  void run() {
    auto q = std::make_shared<serving::EventQueue>();
    auto r = std::make_shared<serving::Request>();
    const auto& gr = g_.req;
    const auto& s = ctx_.settings;
    r->prompt = g_.prompt;
    r->params.max_tokens = gr.max_tokens ? *gr.max_tokens : (s.max_tokens > 0 ? s.max_tokens : -1);
    r->params.stop = gr.stop;
    r->params.ignore_eos = gr.ignore_eos;
    r->params.json_object = gr.json_object;
    r->params.top_logprobs = gr.logprobs ? gr.top_logprobs : -1;
    r->params.sampling = g_.sampling;
    r->params.priority = gr.priority;
    r->params.priority_level = gr.priority_level;
    r->params.deadline = serving::Clock::now() + std::chrono::seconds(s.request_timeout_s);
    r->sink = [q](serving::Event&& e) { q->push(std::move(e)); };
    if (auto st = ctx_.scheduler->submit(r); !st) {
      const ApiError e = error_of(st);
      send_error(&ctx_, res_, e, e.status == 429 ? Headers{{"Retry-After", "1"}} : Headers{});
      return;
    }
    req_ = r.get();
    queue_ = q.get();
    if (g_.req.stream) stream();
    else whole();
  }

 private:
  // The next event; a client seen gone meanwhile gets its request cancelled (its done
  // event still arrives, within a step).
  serving::Event next() {
    serving::Event e;
    for (;;) {
      // Looked at every 50 ms even while tokens flow, so a client that left mid-answer
      // frees its slot within a step or two.
      const auto now = serving::Clock::now();
      if (!gone_ && now - last_check_ >= 50ms) {
        last_check_ = now;
        if (res_.client_gone()) cancel();
      }
      if (queue_->pop(e, 50ms)) return e;
    }
  }
  void cancel() {
    gone_ = true;
    req_->cancel = true;
    ctx_.scheduler->notify();
  }

  json chunk_base() const {
    return {{"id", id_},
            {"object", g_.endpoint == Endpoint::chat ? "chat.completion.chunk" : "text_completion"},
            {"created", created_},
            {"model", ctx_.settings.model_id}};
  }

  std::string piece(int32_t id) const { return tok_ ? tok_->piece(id) : std::to_string(id); }

  json chat_logprobs(const std::vector<serving::TokenLogprob>& lps) const {
    json content = json::array();
    for (const auto& lp : lps) {
      json top = json::array();
      for (const auto& [id, v] : lp.top) top.push_back({{"token", piece(id)}, {"logprob", v}, {"bytes", bytes_of(piece(id))}});
      content.push_back({{"token", piece(lp.id)}, {"logprob", lp.logprob}, {"bytes", bytes_of(piece(lp.id))}, {"top_logprobs", top}});
    }
    return {{"content", content}};
  }

  void text_logprobs(const std::vector<serving::TokenLogprob>& lps, json& into) {
    if (into.is_null()) into = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()}, {"text_offset", json::array()}};
    for (const auto& lp : lps) {
      json top = json::object();
      for (const auto& [id, v] : lp.top) top[piece(id)] = v;
      into["tokens"].push_back(piece(lp.id));
      into["token_logprobs"].push_back(lp.logprob);
      into["top_logprobs"].push_back(top);
      into["text_offset"].push_back(offset_);
      offset_ += static_cast<int64_t>(piece(lp.id).size());
    }
  }

  bool send_chunk(const json& j) {
    if (gone_) return false;
    if (!res_.write("data: " + dump(j) + "\n\n")) {
      cancel();
      return false;
    }
    return true;
  }

  json chat_delta(const OutputDelta& d) const {
    json delta = json::object();
    if (!d.content.empty()) delta["content"] = d.content;
    if (!d.reasoning.empty()) delta["reasoning_content"] = d.reasoning;
    if (d.tool_index >= 0) {
      json call{{"index", d.tool_index}};
      if (!d.tool_id.empty()) call["id"] = d.tool_id, call["type"] = "function";
      json fn = json::object();
      if (!d.tool_name.empty()) fn["name"] = d.tool_name;
      fn["arguments"] = d.tool_arguments;
      call["function"] = fn;
      delta["tool_calls"] = json::array({call});
    }
    return delta;
  }

  void emit(const std::vector<OutputDelta>& deltas, const std::vector<serving::TokenLogprob>* lps) {
    const bool chat = g_.endpoint == Endpoint::chat;
    bool lp_sent = lps == nullptr || lps->empty();
    for (const auto& d : deltas) {
      json c = chunk_base();
      json choice{{"index", 0}};
      if (chat) choice["delta"] = chat_delta(d);
      else choice["text"] = d.content;
      json lpj = nullptr;
      if (!lp_sent) {
        if (chat) lpj = chat_logprobs(*lps);
        else text_logprobs(*lps, lpj);
        lp_sent = true;
      }
      choice["logprobs"] = lpj;
      choice["finish_reason"] = nullptr;
      c["choices"] = json::array({choice});
      if (!send_chunk(c)) return;
    }
    if (!lp_sent) {
      // Tokens whose text is held back still report their logprobs.
      json c = chunk_base();
      json choice{{"index", 0}};
      json lpj = nullptr;
      if (chat) choice["delta"] = json::object(), lpj = chat_logprobs(*lps);
      else choice["text"] = "", text_logprobs(*lps, lpj);
      choice["logprobs"] = lpj;
      choice["finish_reason"] = nullptr;
      c["choices"] = json::array({choice});
      send_chunk(c);
    }
  }

  void stream() {
    const bool chat = g_.endpoint == Endpoint::chat;
    if (!res_.begin_stream(200, "text/event-stream", {{"X-Accel-Buffering", "no"}})) {
      cancel();
    } else {
      if (ctx_.metrics) ctx_.metrics->http_status(200);
      json first = chunk_base();
      json choice{{"index", 0}};
      if (chat) choice["delta"] = {{"role", "assistant"}, {"content", ""}};
      else choice["text"] = g_.req.echo ? g_.prompt_text : "";
      choice["logprobs"] = nullptr;
      choice["finish_reason"] = nullptr;
      first["choices"] = json::array({choice});
      send_chunk(first);
    }
    for (;;) {
      serving::Event e = next();
      if (e.kind == serving::Event::Kind::text) {
        if (gone_) continue;
        emit(g_.shaper->push(e.text), &e.logprobs);
        continue;
      }
      if (gone_) return;
      if (e.kind == serving::Event::Kind::error) {
        send_chunk(dump_error(error_of(e.error)));
      } else {
        emit(g_.shaper->finish(), nullptr);
        json c = chunk_base();
        json choice{{"index", 0}};
        if (chat) choice["delta"] = json::object();
        else choice["text"] = "";
        choice["logprobs"] = nullptr;
        choice["finish_reason"] = finish_reason(e.finish_reason, g_.shaper->has_tool_calls());
        c["choices"] = json::array({choice});
        send_chunk(c);
        if (g_.req.include_usage) {
          json u = chunk_base();
          u["choices"] = json::array();
          u["usage"] = usage_json(e.usage);
          send_chunk(u);
        }
      }
      if (!gone_ && res_.write("data: [DONE]\n\n")) res_.end_stream();
      return;
    }
  }

  static json dump_error(const ApiError& e) { return e.to_json(); }

  void whole() {
    const bool chat = g_.endpoint == Endpoint::chat;
    std::string content, reasoning;
    json calls = json::array();
    json lpj = nullptr;
    std::vector<serving::TokenLogprob> lps;
    auto take = [&](const std::vector<OutputDelta>& ds) {
      for (const auto& d : ds) {
        content += d.content;
        reasoning += d.reasoning;
        if (d.tool_index >= 0) {
          while (static_cast<int>(calls.size()) <= d.tool_index)
            calls.push_back({{"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}});
          auto& c = calls[static_cast<size_t>(d.tool_index)];
          if (!d.tool_id.empty()) c["id"] = d.tool_id;
          if (!d.tool_name.empty()) c["function"]["name"] = d.tool_name;
          c["function"]["arguments"] = c["function"]["arguments"].get<std::string>() + d.tool_arguments;
        }
      }
    };
    for (;;) {
      serving::Event e = next();
      if (e.kind == serving::Event::Kind::text) {
        take(g_.shaper->push(e.text));
        lps.insert(lps.end(), e.logprobs.begin(), e.logprobs.end());
        continue;
      }
      if (gone_) return;
      if (e.kind == serving::Event::Kind::error) return send_error(&ctx_, res_, error_of(e.error));
      if (e.finish_reason == "cancelled")
        return send_error(&ctx_, res_, {503, "the server is shutting down", "server_error", "", "shutting_down"});
      take(g_.shaper->finish());
      json choice{{"index", 0}};
      if (chat) {
        json msg{{"role", "assistant"}, {"content", content}};
        if (!reasoning.empty()) msg["reasoning_content"] = reasoning;
        if (!calls.empty()) {
          msg["tool_calls"] = calls;
          if (content.empty()) msg["content"] = nullptr;
        }
        choice["message"] = msg;
        if (g_.req.logprobs) lpj = chat_logprobs(lps);
      } else {
        choice["text"] = (g_.req.echo ? g_.prompt_text : std::string()) + content;
        if (g_.req.logprobs) text_logprobs(lps, lpj);
      }
      choice["logprobs"] = lpj;
      choice["finish_reason"] = finish_reason(e.finish_reason, !calls.empty());
      json out{{"id", id_},
               {"object", chat ? "chat.completion" : "text_completion"},
               {"created", created_},
               {"model", ctx_.settings.model_id},
               {"choices", json::array({choice})},
               {"usage", usage_json(e.usage)}};
      if (ctx_.metrics) ctx_.metrics->http_status(200);
      res_.send(200, "application/json", dump(out));
      return;
    }
  }

  ServeContext& ctx_;
  HttpResponder& res_;
  Generation& g_;
  const tok::Tokenizer* tok_;
  std::string id_;
  int64_t created_;
  serving::Request* req_ = nullptr;
  serving::EventQueue* queue_ = nullptr;
  bool gone_ = false;
  serving::Clock::time_point last_check_{};
  int64_t offset_ = 0;
};

}  // namespace

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void send_error(ServeContext* ctx, HttpResponder& res, const ApiError& e, const Headers& extra) {
  if (ctx && ctx->metrics) ctx->metrics->http_status(e.status);
  res.send(e.status, "application/json", dump(e.to_json()), extra);
}

void run_generation(ServeContext& ctx, HttpResponder& res, Generation g) {
  const auto n = static_cast<int64_t>(g.prompt.size());
  const auto& gr = g.req;
  const int64_t cap = ctx.settings.max_tokens > 0 ? ctx.settings.max_tokens : ctx.n_ctx;
  const std::string what = g.endpoint == Endpoint::chat ? "messages" : "prompt";
  if (n == 0) return send_error(&ctx, res, bad_field(what, "The " + what + " gave no tokens."));
  if (n >= ctx.n_ctx)
    return send_error(&ctx, res,
                      {400,
                       "This model's maximum context length is " + std::to_string(ctx.n_ctx) + " tokens. However, your " +
                           what + " resulted in " + std::to_string(n) + " tokens. Please reduce the length of the " + what + ".",
                       "invalid_request_error", what, "context_length_exceeded"});
  if (gr.max_tokens && *gr.max_tokens > cap)
    return send_error(&ctx, res,
                      bad_field("max_tokens", "'max_tokens' is " + std::to_string(*gr.max_tokens) +
                                                  ", more than this server allows (" + std::to_string(cap) + ")."));
  if (gr.max_tokens && n + *gr.max_tokens > ctx.n_ctx)
    return send_error(&ctx, res,
                      {400,
                       "This model's maximum context length is " + std::to_string(ctx.n_ctx) +
                           " tokens. However, you requested " + std::to_string(n + *gr.max_tokens) + " tokens (" +
                           std::to_string(n) + " in the " + what + ", " + std::to_string(*gr.max_tokens) +
                           " in the completion). Please reduce the length of the " + what + " or completion.",
                       "invalid_request_error", what, "context_length_exceeded"});
  if (gr.priority == serving::Priority::batch && !ctx.settings.batch_queue)
    return send_error(&ctx, res,
                      bad_field("service_tier", "This server has no batch queue (server.batch_queue is false); leave "
                                                "'service_tier' out or use 'auto'.",
                                "unsupported_value"));
  Answer a(ctx, res, g);
  a.run();
}

}  // namespace sy::server::openai
