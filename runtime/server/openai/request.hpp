// The body of POST /v1/chat/completions and /v1/completions, read and type-checked into
// plain data. Every field error is an ApiError naming the field, as OpenAI answers (400
// with "param"); unknown fields are ignored, as clients send extras (user, metadata, ...).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "server/api_error.hpp"
#include "serving/request.hpp"

namespace sy::server::openai {

/// OpenAI's sampling fields (and llama.cpp's / vLLM's usual extras) as given; unset ones
/// leave the pipeline's chain as it is.
struct SamplingFields {
  std::optional<double> temperature, top_p, min_p, presence_penalty, frequency_penalty, repetition_penalty;
  std::optional<int64_t> top_k, seed;
  std::vector<std::pair<int64_t, double>> logit_bias;  ///< token id, bias
};

struct GenerationRequest {
  std::string model;  ///< empty: not given
  bool stream = false;
  bool include_usage = false;
  std::optional<int64_t> max_tokens;
  std::vector<std::string> stop;
  bool logprobs = false;
  int top_logprobs = 0;
  bool json_object = false;  ///< response_format json_object
  SamplingFields sampling;
  serving::Priority priority = serving::Priority::interactive;
  int priority_level = 0;
  bool ignore_eos = false;

  // Chat completions.
  nlohmann::ordered_json messages;  ///< validated: an array of message objects
  nlohmann::ordered_json tools;     ///< null or an array of {type: function, function: {...}}
  std::string tool_choice = "auto"; ///< "none", "auto", "required" or "function"
  std::string tool_choice_name;     ///< with "function": the name
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();  ///< chat_template_kwargs

  // Completions: text, or token ids.
  std::variant<std::string, std::vector<int32_t>> prompt;
  bool echo = false;
};

/// Reads a chat completions body; on error returns it.
std::optional<ApiError> parse_chat_request(const nlohmann::json& body, GenerationRequest& out);
/// Reads a completions body; on error returns it.
std::optional<ApiError> parse_completion_request(const nlohmann::json& body, GenerationRequest& out);

/// The JSON body of a request, or a 400 saying where it does not parse.
std::optional<ApiError> parse_body(const std::string& text, nlohmann::json& out);

}  // namespace sy::server::openai
