// One generation request from submit to answer, shared by chat and text completions: the
// request goes to the scheduler, and its events come back as server-sent-event chunks or
// as one JSON body, in OpenAI's shapes. A client that disconnects (seen while waiting or
// when a write fails) has its request cancelled, which frees its KV blocks within a step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/context.hpp"
#include "server/http.hpp"
#include "server/openai/output.hpp"
#include "server/openai/request.hpp"

namespace sy::server::openai {

enum class Endpoint { chat, completion };

struct Generation {
  Endpoint endpoint = Endpoint::chat;
  uint64_t number = 0;  ///< the request's number: its id and its tool calls' ids
  GenerationRequest req;
  std::vector<int32_t> prompt;
  std::string prompt_text;           ///< completions with echo: the prompt's text
  std::unique_ptr<OutputShaper> shaper;  ///< how raw text becomes content / reasoning / tool calls
  std::vector<pipeline::ComponentConfig> sampling;  ///< the request's chain
};

/// Submits `g` and answers on `res` (streamed or whole).
void run_generation(ServeContext& ctx, HttpResponder& res, Generation g);

/// Sends an ApiError as the answer (and counts its status).
void send_error(ServeContext* ctx, HttpResponder& res, const ApiError& e, const Headers& extra = {});

/// JSON text for an answer: invalid UTF-8 (a token's partial character) is replaced, never thrown.
std::string dump(const nlohmann::ordered_json& j);

}  // namespace sy::server::openai
