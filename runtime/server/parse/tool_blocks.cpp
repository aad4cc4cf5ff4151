#include "server/parse/tool_blocks.hpp"

#include <algorithm>

namespace sy::server {

namespace {

BlockScan invalid() { return {BlockScan::Kind::invalid, 0, {}}; }
BlockScan more() { return {BlockScan::Kind::more, 0, {}}; }

}  // namespace

size_t skip_ws(std::string_view s, size_t pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
  return pos;
}

JsonBlockReader::JsonBlockReader(size_t marker_length, HeaderFn header, std::string trailer, JsonCallsFn to_calls)
    : marker_(marker_length), header_(std::move(header)), trailer_(std::move(trailer)), to_calls_(std::move(to_calls)) {}

BlockScan JsonBlockReader::scan(std::string_view text, bool final) {
  if (!header_done_) {
    json_begin_ = marker_;
    if (header_) {
      HeaderScan h = header_(text.substr(marker_), final);
      if (h.kind == HeaderScan::Kind::invalid || (h.kind == HeaderScan::Kind::more && final)) return invalid();
      if (h.kind == HeaderScan::Kind::more) return more();
      name_ = std::move(h.name);
      json_begin_ += h.length;
    }
    header_done_ = true;
    cursor_ = json_begin_;
  }
  if (json_end_ == std::string_view::npos) {
    while (cursor_ < text.size()) {
      const auto s = scanner_.feed(text[cursor_++]);
      if (s == JsonScanner::State::invalid) return invalid();
      if (s == JsonScanner::State::done) {
        json_end_ = cursor_;
        break;
      }
    }
    if (json_end_ == std::string_view::npos) return final ? invalid() : more();
  }
  size_t end = json_end_;
  if (!trailer_.empty()) {
    const size_t p = skip_ws(text, json_end_);
    const std::string_view rest = text.substr(p);
    if (rest.size() >= trailer_.size()) {
      if (!rest.starts_with(trailer_)) return invalid();
      end = p + trailer_.size();
    } else {
      if (!std::string_view(trailer_).starts_with(rest)) return invalid();
      if (!final) return more();
      end = text.size();
    }
  }
  const std::string_view json = text.substr(json_begin_, json_end_ - json_begin_);
  const auto value = nlohmann::ordered_json::parse(json.begin(), json.end(), nullptr, false);
  if (value.is_discarded()) return invalid();  // e.g. a string that is not UTF-8
  auto calls = to_calls_(value, name_);
  if (!calls || calls->empty()) return invalid();
  return {BlockScan::Kind::complete, end, std::move(*calls)};
}

DelimitedBlockReader::DelimitedBlockReader(size_t marker_length, std::string close, ViableFn viable, BodyFn body)
    : marker_(marker_length), close_(std::move(close)), viable_(std::move(viable)), body_(std::move(body)) {}

BlockScan DelimitedBlockReader::scan(std::string_view text, bool final) {
  const size_t p = text.find(close_, std::max(marker_, searched_));
  if (p != std::string_view::npos) {
    auto calls = body_(text.substr(marker_, p - marker_));
    if (!calls || calls->empty()) return invalid();
    return {BlockScan::Kind::complete, p + close_.size(), std::move(*calls)};
  }
  // The closing tag may still end in the bytes not yet seen.
  searched_ = std::max(marker_, text.size() - std::min(text.size(), close_.size() - 1));
  std::string_view body = text.substr(marker_);
  if (!confirmed_ && viable_) {
    const Viability v = viable_(body);
    if (v == Viability::no) return invalid();
    confirmed_ = v == Viability::yes;
  }
  if (!final) return more();
  // The output ended without the closing tag (or inside it): the body may still be whole.
  for (size_t k = std::min(close_.size() - 1, body.size()); k > 0; --k)
    if (std::string_view(close_).starts_with(body.substr(body.size() - k))) {
      body.remove_suffix(k);
      break;
    }
  auto calls = body_(body);
  if (!calls || calls->empty()) return invalid();
  return {BlockScan::Kind::complete, text.size(), std::move(*calls)};
}

}  // namespace sy::server
