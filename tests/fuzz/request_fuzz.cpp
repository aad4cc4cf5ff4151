// libFuzzer target for the server's request bodies: any bytes sent to /v1/chat/completions
// or /v1/completions must end as a parsed request or an OpenAI-shaped error naming a field,
// never a crash, undefined behaviour or an exception escaping. The first byte picks the
// endpoint; the rest is the body.
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/openai/request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool chat = (data[0] & 1) == 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  nlohmann::json j;
  if (auto e = sy::server::openai::parse_body(body, j)) {
    // The parser's message quotes the input, which may not be UTF-8: the server replaces
    // such bytes when it writes the answer, and so does this.
    if (e->status != 400 || e->to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).empty())
      __builtin_trap();
    return 0;
  }
  sy::server::openai::GenerationRequest r;
  const auto e = chat ? sy::server::openai::parse_chat_request(j, r) : sy::server::openai::parse_completion_request(j, r);
  if (e) {
    // Every refusal is a client error with a message.
    if (e->status != 400 || e->message.empty()) __builtin_trap();
    (void)e->to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return 0;
  }
  // What was accepted is within the ranges the rest of the server relies on.
  if (r.max_tokens && *r.max_tokens < 1) __builtin_trap();
  if (r.top_logprobs < 0 || r.top_logprobs > 20) __builtin_trap();
  if (chat && (!r.messages.is_array() || r.messages.empty())) __builtin_trap();
  return 0;
}
