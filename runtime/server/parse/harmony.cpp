#include "server/parse/harmony.hpp"

#include <array>

namespace sy::server {

namespace {

constexpr std::string_view kMessage = "<|message|>";
constexpr std::array<std::string_view, 3> kEnds = {"<|end|>", "<|call|>", "<|return|>"};
// A header longer than this is not one (the output is plain text after all).
constexpr size_t kMaxHeader = 512;

// The word after `key` in the header (up to a space or the next special token).
std::string_view field(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view v = header.substr(at + key.size());
  return v.substr(0, v.find_first_of(" <"));
}

// Whether a header may start like `s`: with a special token or with " to=".
bool header_start(std::string_view s) {
  for (const std::string_view start : {std::string_view("<|"), std::string_view(" to=")})
    if (s.size() <= start.size() ? start.starts_with(s) : s.starts_with(start)) return true;
  return false;
}

}  // namespace

void HarmonyParser::push(std::string_view text, std::vector<HarmonyItem>& out) {
  buf_ += text;
  run(false, out);
}

void HarmonyParser::finish(std::vector<HarmonyItem>& out) {
  run(true, out);
  if (state_ == State::body) {
    end_body(out);
  } else {
    emit(HarmonyItem::Kind::content, buf_, out);  // an unfinished header, or raw text
  }
  buf_.clear();
}

void HarmonyParser::emit(HarmonyItem::Kind kind, std::string_view text, std::vector<HarmonyItem>& out) {
  if (text.empty()) return;
  if (!out.empty() && out.back().kind == kind && kind != HarmonyItem::Kind::call) {
    out.back().text += text;
    return;
  }
  out.push_back({kind, std::string(text), {}});
}

void HarmonyParser::start_body(std::string_view header) {
  const std::string_view channel = field(header, "<|channel|>");
  const std::string_view recipient = field(header, "to=");
  call_name_.clear();
  call_body_.clear();
  if (calls_ && recipient.starts_with("functions.") && recipient.size() > 10) {
    call_name_ = recipient.substr(10);
    body_kind_ = HarmonyItem::Kind::call;
  } else if (channel == "analysis" && reasoning_) {
    body_kind_ = HarmonyItem::Kind::reasoning;
  } else {
    body_kind_ = HarmonyItem::Kind::content;
  }
}

void HarmonyParser::end_body(std::vector<HarmonyItem>& out) {
  if (body_kind_ != HarmonyItem::Kind::call) {
    emit(body_kind_, buf_, out);
    return;
  }
  call_body_ += buf_;
  const auto v = nlohmann::ordered_json::parse(call_body_, nullptr, false);
  auto args = v.is_discarded() || v.is_null() ? std::nullopt : arguments_object(&v);
  // The engine may stop on <|call|> without writing it, so a body that is a whole JSON object
  // is a call even without it; anything else goes out as content, as a malformed call's does.
  if (!args) {
    emit(HarmonyItem::Kind::content, call_body_, out);
    return;
  }
  out.push_back({HarmonyItem::Kind::call, {}, RawCall{call_name_, std::move(*args)}});
}

void HarmonyParser::run(bool final, std::vector<HarmonyItem>& out) {
  for (;;) {
    if (state_ == State::raw) {
      emit(HarmonyItem::Kind::content, buf_, out);
      buf_.clear();
      return;
    }
    if (state_ == State::header) {
      if (buf_.empty()) return;
      if (!header_start(buf_)) {
        state_ = State::raw;
        continue;
      }
      const size_t m = buf_.find(kMessage);
      if (m == std::string::npos || m > kMaxHeader) {
        if (buf_.size() > kMaxHeader + kMessage.size()) state_ = State::raw;
        if (state_ == State::raw) continue;
        return;
      }
      start_body(std::string_view(buf_).substr(0, m));
      buf_.erase(0, m + kMessage.size());
      state_ = State::body;
      continue;
    }
    // Body: find the end marker; hold a tail that may still become one.
    size_t end = std::string::npos, end_len = 0;
    for (const auto e : kEnds)
      if (const size_t p = buf_.find(e); p < end) {
        end = p;
        end_len = e.size();
      }
    if (end != std::string::npos) {
      const std::string rest = buf_.substr(end + end_len);
      buf_.resize(end);
      end_body(out);
      buf_ = rest;
      state_ = State::header;
      continue;
    }
    size_t keep = buf_.size();
    if (!final)
      for (const auto e : kEnds)
        for (size_t n = std::min(e.size() - 1, buf_.size()); n > 0; --n)
          if (e.starts_with(std::string_view(buf_).substr(buf_.size() - n))) {
            keep = std::min(keep, buf_.size() - n);
            break;
          }
    if (body_kind_ == HarmonyItem::Kind::call) call_body_ += buf_.substr(0, keep);
    else emit(body_kind_, std::string_view(buf_).substr(0, keep), out);
    buf_.erase(0, keep);
    return;
  }
}

}  // namespace sy::server
