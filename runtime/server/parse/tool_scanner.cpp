#include "server/parse/tool_scanner.hpp"

namespace sy::server {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

ToolCallScanner::ToolCallScanner(ToolFormat format, std::shared_ptr<const nlohmann::json> tools)
    : markers_(format_markers(format, std::move(tools))) {}

void ToolCallScanner::push(std::string_view text, std::vector<ScanItem>& out) {
  buf_ += text;
  run(false, out);
}

void ToolCallScanner::finish(std::vector<ScanItem>& out) {
  run(true, out);
  emit_text(buf_, out);
  buf_.clear();
  if (!held_ws_.empty() && !after_call_) out.push_back({false, std::move(held_ws_), {}});
  held_ws_.clear();
}

void ToolCallScanner::emit_text(std::string_view text, std::vector<ScanItem>& out) {
  if (text.empty()) return;
  held_ws_ += text;
  size_t keep = held_ws_.size();
  while (keep > 0 && is_ws(held_ws_[keep - 1])) --keep;
  if (keep == 0) return;
  after_call_ = false;
  if (!out.empty() && !out.back().is_call) out.back().text.append(held_ws_, 0, keep);
  else out.push_back({false, held_ws_.substr(0, keep), {}});
  held_ws_.erase(0, keep);
}

void ToolCallScanner::find_marker(size_t& which, size_t& at, size_t& partial) const {
  which = 0;
  at = std::string::npos;
  partial = buf_.size();
  for (size_t i = 0; i < markers_.markers.size(); ++i) {
    const std::string& m = markers_.markers[i].text;
    const size_t p = buf_.find(m);
    if (p < at || (p == at && p != std::string::npos && m.size() > markers_.markers[which].text.size())) {
      which = i;
      at = p;
    }
    // The longest tail of buf_ that the marker starts with.
    for (size_t n = std::min(m.size() - 1, buf_.size()); n > 0; --n)
      if (buf_.compare(buf_.size() - n, n, m, 0, n) == 0) {
        partial = std::min(partial, buf_.size() - n);
        break;
      }
  }
}

void ToolCallScanner::run(bool final, std::vector<ScanItem>& out) {
  for (;;) {
    if (block_) {
      BlockScan r = block_->scan(buf_, final);
      if (r.kind == BlockScan::Kind::more) return;
      block_.reset();
      at_start_ = false;
      if (r.kind == BlockScan::Kind::complete) {
        held_ws_.clear();
        for (auto& c : r.calls) out.push_back({true, {}, std::move(c)});
        buf_.erase(0, r.length);
        after_call_ = true;
      } else {
        // Not a call: its marker is content, and the text after it is looked at afresh.
        emit_text(std::string_view(buf_).substr(0, block_marker_), out);
        buf_.erase(0, block_marker_);
      }
      continue;
    }
    if (after_call_) {
      size_t n = 0;
      while (n < buf_.size() && is_ws(buf_[n])) ++n;
      buf_.erase(0, n);
    }
    if (buf_.empty()) return;
    if (at_start_ && markers_.leading_json) {
      size_t n = 0;
      while (n < buf_.size() && is_ws(buf_[n])) ++n;
      if (n == buf_.size() && !final) return;
      if (n < buf_.size() && buf_[n] == '{') {
        emit_text(std::string_view(buf_).substr(0, n), out);
        buf_.erase(0, n);
        block_ = markers_.leading_json();
        block_marker_ = 0;
        continue;
      }
    }
    at_start_ = false;
    size_t which = 0, at = 0, partial = 0;
    find_marker(which, at, partial);
    const size_t cut = std::min(at, final ? buf_.size() : partial);
    if (cut > 0) {
      emit_text(std::string_view(buf_).substr(0, cut), out);
      buf_.erase(0, cut);
      continue;
    }
    if (at != 0) return;  // a marker may begin here: wait for more
    const BlockMarker& m = markers_.markers[which];
    if (!m.reader) {
      buf_.erase(0, m.text.size());
      continue;
    }
    block_ = m.reader();
    block_marker_ = m.text.size();
  }
}

}  // namespace sy::server
