#include "server/openai/request.hpp"

#include <cmath>
#include <sstream>

namespace sy::server::openai {
namespace {

using json = nlohmann::json;

std::string type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a number";
    default: return "an integer";
  }
}

ApiError wrong_type(const std::string& field, const std::string& expected, const json& got) {
  return bad_field(field, "Invalid type for '" + field + "': expected " + expected + ", but got " + type_name(got) + " instead.",
                   "invalid_type");
}

// Readers for one optional field: absent or null leaves `out` unset.
struct Reader {
  const json& body;
  std::optional<ApiError> err;

  const json* get(const char* key) {
    if (err) return nullptr;
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) return nullptr;
    return &*it;
  }
  void boolean(const char* key, bool& out) {
    if (const json* v = get(key)) {
      if (!v->is_boolean()) err = wrong_type(key, "a boolean", *v);
      else out = v->get<bool>();
    }
  }
  void number(const char* key, std::optional<double>& out, double lo, double hi) {
    if (const json* v = get(key)) {
      if (!v->is_number()) return void(err = wrong_type(key, "a number", *v));
      const double x = v->get<double>();
      if (!std::isfinite(x) || x < lo || x > hi)
        return void(err = bad_field(key, "'" + std::string(key) + "' must be between " + num(lo) + " and " + num(hi) +
                                             ", got " + v->dump() + "."));
      out = x;
    }
  }
  void integer(const char* key, std::optional<int64_t>& out, int64_t lo, int64_t hi) {
    if (const json* v = get(key)) {
      // 3.0 is accepted as 3, as JSON has one number type.
      if (!v->is_number() || (v->is_number_float() && std::floor(v->get<double>()) != v->get<double>()))
        return void(err = wrong_type(key, "an integer", *v));
      if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        return void(err = bad_field(key, "'" + std::string(key) + "' is too large."));
      const double d = v->get<double>();
      if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
        return void(err = bad_field(key, "'" + std::string(key) + "' must be between " + std::to_string(lo) + " and " +
                                             std::to_string(hi) + ", got " + v->dump() + "."));
      out = v->is_number_float() ? static_cast<int64_t>(d) : v->get<int64_t>();
    }
  }
  static std::string num(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  }
};

std::optional<ApiError> common(const json& body, GenerationRequest& r) {
  if (!body.is_object()) return ApiError{400, "The request body must be a JSON object.", "invalid_request_error", "", "invalid_body"};
  Reader rd{body, std::nullopt};
  if (const json* v = rd.get("model")) {
    if (!v->is_string()) return wrong_type("model", "a string", *v);
    r.model = v->get<std::string>();
  }
  rd.boolean("stream", r.stream);
  if (const json* v = rd.get("stream_options")) {
    if (!v->is_object()) return wrong_type("stream_options", "an object", *v);
    if (!r.stream)
      return bad_field("stream_options", "'stream_options' is only allowed when 'stream' is true.");
    Reader so{*v, std::nullopt};
    so.boolean("include_usage", r.include_usage);
    if (so.err) {
      so.err->param = "stream_options.include_usage";
      return so.err;
    }
  }
  // max_completion_tokens is the newer name; both mean the same.
  rd.integer("max_tokens", r.max_tokens, 1, INT32_MAX);
  std::optional<int64_t> mct;
  rd.integer("max_completion_tokens", mct, 1, INT32_MAX);
  if (mct) r.max_tokens = mct;
  if (rd.err) return rd.err;
  if (const json* v = rd.get("stop")) {
    if (v->is_string()) {
      r.stop = {v->get<std::string>()};
    } else if (v->is_array()) {
      if (v->size() > 16) return bad_field("stop", "'stop' may hold at most 16 sequences, got " + std::to_string(v->size()) + ".");
      for (const auto& s : *v) {
        if (!s.is_string()) return wrong_type("stop", "a string or an array of strings", s);
        r.stop.push_back(s.get<std::string>());
      }
    } else {
      return wrong_type("stop", "a string or an array of strings", *v);
    }
    for (const auto& s : r.stop)
      if (s.empty()) return bad_field("stop", "'stop' sequences must not be empty.");
  }
  if (const json* v = rd.get("n")) {
    if (!v->is_number_integer() || v->get<int64_t>() != 1)
      return bad_field("n", "Only n = 1 is supported: send the request once per answer.", "unsupported_value");
  }
  auto& s = r.sampling;
  rd.number("temperature", s.temperature, 0, 100);
  rd.number("top_p", s.top_p, 0, 1);
  rd.number("min_p", s.min_p, 0, 1);
  rd.integer("top_k", s.top_k, 0, 1000000000);
  rd.number("presence_penalty", s.presence_penalty, -2, 2);
  rd.number("frequency_penalty", s.frequency_penalty, -2, 2);
  rd.number("repetition_penalty", s.repetition_penalty, 0, 10);
  rd.integer("seed", s.seed, 0, INT64_MAX);
  rd.boolean("ignore_eos", r.ignore_eos);
  if (rd.err) return rd.err;
  if (const json* v = rd.get("logit_bias")) {
    if (!v->is_object()) return wrong_type("logit_bias", "an object mapping token ids to biases", *v);
    for (const auto& [k, b] : v->items()) {
      int64_t id = -1;
      try {
        size_t used = 0;
        id = std::stoll(k, &used);
        if (used != k.size()) id = -1;
      } catch (const std::exception&) {
        id = -1;
      }
      if (id < 0) return bad_field("logit_bias", "'logit_bias' keys must be token ids, got '" + k + "'.");
      if (!b.is_number()) return wrong_type("logit_bias", "a number for token " + k, b);
      const double x = b.get<double>();
      if (!std::isfinite(x) || x < -100 || x > 100)
        return bad_field("logit_bias", "'logit_bias' values must be between -100 and 100, got " + b.dump() + " for token " + k + ".");
      s.logit_bias.emplace_back(id, x);
    }
  }
  if (const json* v = rd.get("response_format")) {
    if (!v->is_object() || !v->contains("type") || !(*v)["type"].is_string())
      return bad_field("response_format", "'response_format' must be an object with a 'type' ('text' or 'json_object').");
    const auto t = (*v)["type"].get<std::string>();
    if (t == "json_object") r.json_object = true;
    else if (t != "text")
      return bad_field("response_format.type",
                       "response_format type '" + t + "' is not supported; use 'text' or 'json_object'.", "unsupported_value");
  }
  if (const json* v = rd.get("service_tier")) {
    if (!v->is_string()) return wrong_type("service_tier", "a string", *v);
    const auto t = v->get<std::string>();
    if (t == "flex" || t == "batch") r.priority = serving::Priority::batch;
    else if (t != "auto" && t != "default" && t != "priority")
      return bad_field("service_tier", "'service_tier' must be 'auto', 'default', 'flex' or 'priority', got '" + t + "'.");
  }
  std::optional<int64_t> prio;
  rd.integer("priority", prio, -1000000, 1000000);
  if (rd.err) return rd.err;
  // vLLM's convention: a lower priority value is served earlier.
  if (prio) r.priority_level = static_cast<int>(-*prio);
  return std::nullopt;
}

std::optional<ApiError> logprob_fields(const json& body, GenerationRequest& r, bool chat) {
  Reader rd{body, std::nullopt};
  if (chat) {
    rd.boolean("logprobs", r.logprobs);
    std::optional<int64_t> top;
    rd.integer("top_logprobs", top, 0, 20);
    if (rd.err) return rd.err;
    if (top && !r.logprobs) return bad_field("top_logprobs", "'top_logprobs' needs 'logprobs' set to true.");
    r.top_logprobs = static_cast<int>(top.value_or(0));
  } else {
    std::optional<int64_t> n;
    rd.integer("logprobs", n, 0, 20);
    if (rd.err) return rd.err;
    r.logprobs = n.has_value();
    r.top_logprobs = static_cast<int>(n.value_or(0));
  }
  return std::nullopt;
}

std::optional<ApiError> check_message(const json& m, size_t i) {
  const std::string at = "messages[" + std::to_string(i) + "]";
  if (!m.is_object()) return wrong_type(at, "an object", m);
  if (!m.contains("role") || !m["role"].is_string()) return bad_field(at + ".role", "Each message needs a 'role' string.");
  const auto role = m["role"].get<std::string>();
  if (role != "system" && role != "developer" && role != "user" && role != "assistant" && role != "tool")
    return bad_field(at + ".role", "Invalid role '" + role + "': use system, developer, user, assistant or tool.");
  const bool has_calls = m.contains("tool_calls") && m["tool_calls"].is_array() && !m["tool_calls"].empty();
  auto c = m.find("content");
  if (c == m.end() || c->is_null()) {
    if (role == "assistant" && has_calls) return std::nullopt;
    return bad_field(at + ".content", "Message " + std::to_string(i) + " (" + role + ") has no content.");
  }
  if (c->is_array()) {
    for (const auto& part : *c) {
      if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
        return bad_field(at + ".content", "Content parts must be objects with a 'type'.");
      if (part["type"] != "text")
        return bad_field(at + ".content", "Content parts of type '" + part["type"].get<std::string>() +
                                              "' are not supported: this model reads text only.",
                         "unsupported_value");
      if (!part.contains("text") || !part["text"].is_string())
        return bad_field(at + ".content", "A text content part needs a 'text' string.");
    }
  } else if (!c->is_string()) {
    return wrong_type(at + ".content", "a string or an array of content parts", *c);
  }
  if (m.contains("tool_calls") && !m["tool_calls"].is_null()) {
    if (!m["tool_calls"].is_array()) return wrong_type(at + ".tool_calls", "an array", m["tool_calls"]);
    for (const auto& tc : m["tool_calls"])
      if (!tc.is_object() || !tc.contains("function") || !tc["function"].is_object() || !tc["function"].contains("name"))
        return bad_field(at + ".tool_calls", "Each tool call needs a 'function' with a 'name'.");
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_body(const std::string& text, nlohmann::json& out) {
  try {
    out = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number no double holds (1e99999).
    return ApiError{400,
                    "We could not parse the JSON body of your request: " + std::string(e.what()) +
                        ". Send a JSON object with Content-Type: application/json.",
                    "invalid_request_error", "", "invalid_json"};
  }
  return std::nullopt;
}

std::optional<ApiError> parse_chat_request(const nlohmann::json& body, GenerationRequest& r) {
  if (auto e = common(body, r)) return e;
  if (auto e = logprob_fields(body, r, true)) return e;
  auto m = body.find("messages");
  if (m == body.end()) return bad_field("messages", "Missing required parameter: 'messages'.", "missing_required_parameter");
  if (!m->is_array()) return wrong_type("messages", "an array", *m);
  if (m->empty()) return bad_field("messages", "'messages' must hold at least one message.");
  for (size_t i = 0; i < m->size(); ++i)
    if (auto e = check_message((*m)[i], i)) return e;
  r.messages = nlohmann::ordered_json::parse(m->dump());
  if (auto t = body.find("tools"); t != body.end() && !t->is_null()) {
    if (!t->is_array()) return wrong_type("tools", "an array", *t);
    for (size_t i = 0; i < t->size(); ++i) {
      const auto& tool = (*t)[i];
      if (!tool.is_object() || tool.value("type", "") != "function" || !tool.contains("function") ||
          !tool["function"].is_object() || !tool["function"].contains("name") || !tool["function"]["name"].is_string())
        return bad_field("tools[" + std::to_string(i) + "]",
                         "Each tool must be {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": {...}}}.");
    }
    if (!t->empty()) r.tools = nlohmann::ordered_json::parse(t->dump());
  }
  if (auto tc = body.find("tool_choice"); tc != body.end() && !tc->is_null()) {
    if (tc->is_string()) {
      r.tool_choice = tc->get<std::string>();
      if (r.tool_choice != "none" && r.tool_choice != "auto" && r.tool_choice != "required")
        return bad_field("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or a function, got '" + r.tool_choice + "'.");
    } else if (tc->is_object() && tc->contains("function") && (*tc)["function"].is_object() &&
               (*tc)["function"].contains("name") && (*tc)["function"]["name"].is_string()) {
      r.tool_choice = "function";
      r.tool_choice_name = (*tc)["function"]["name"].get<std::string>();
    } else {
      return bad_field("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": ...}}.");
    }
    if (r.tool_choice != "none" && r.tool_choice != "auto" && r.tools.is_null())
      return bad_field("tool_choice", "'tool_choice' asks for a tool, but the request has no 'tools'.");
    if (r.tool_choice == "function") {
      bool found = false;
      for (const auto& t : r.tools) found = found || t["function"]["name"] == r.tool_choice_name;
      if (!found) return bad_field("tool_choice", "'tool_choice' names '" + r.tool_choice_name + "', which is not in 'tools'.");
    }
  }
  if (auto k = body.find("chat_template_kwargs"); k != body.end() && !k->is_null()) {
    if (!k->is_object()) return wrong_type("chat_template_kwargs", "an object", *k);
    r.template_kwargs = nlohmann::ordered_json::parse(k->dump());
  }
  return std::nullopt;
}

std::optional<ApiError> parse_completion_request(const nlohmann::json& body, GenerationRequest& r) {
  if (auto e = common(body, r)) return e;
  if (auto e = logprob_fields(body, r, false)) return e;
  if (body.contains("echo") && !body["echo"].is_null()) {
    if (!body["echo"].is_boolean()) return wrong_type("echo", "a boolean", body["echo"]);
    r.echo = body["echo"].get<bool>();
  }
  auto p = body.find("prompt");
  if (p == body.end()) return bad_field("prompt", "Missing required parameter: 'prompt'.", "missing_required_parameter");
  auto ids = [&](const json& a) -> std::optional<ApiError> {
    std::vector<int32_t> v;
    for (const auto& x : a) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > INT32_MAX)
        return bad_field("prompt", "A token-id prompt must hold non-negative integers.");
      v.push_back(static_cast<int32_t>(x.get<int64_t>()));
    }
    if (v.empty()) return bad_field("prompt", "The prompt is empty.");
    r.prompt = std::move(v);
    return std::nullopt;
  };
  if (p->is_string()) {
    r.prompt = p->get<std::string>();
  } else if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    r.prompt = (*p)[0].get<std::string>();
  } else if (p->is_array() && p->size() == 1 && (*p)[0].is_array()) {
    return ids((*p)[0]);
  } else if (p->is_array() && !p->empty() && (*p)[0].is_number()) {
    return ids(*p);
  } else if (p->is_array() && p->size() > 1) {
    return bad_field("prompt", "Only one prompt per request is supported: send a request per prompt.", "unsupported_value");
  } else {
    return wrong_type("prompt", "a string, an array of token ids, or an array of one of those", *p);
  }
  return std::nullopt;
}

}  // namespace sy::server::openai
