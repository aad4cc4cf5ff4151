// Encoding (special-token partition, BPE merges, SentencePiece bigrams) and decoding.
#include <algorithm>
#include <cstdio>
#include <queue>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer/unicode.hpp"

namespace sy::tok {
namespace {

// UTF-8 character boundaries of `s` (a lone invalid byte counts as one character).
std::vector<std::string_view> characters(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = std::min(utf8_len(static_cast<unsigned char>(s[i])), s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

// A piece of text, or a token already identified.
struct Fragment {
  std::string_view text;
  int32_t token = -1;
};

}  // namespace

int32_t Tokenizer::find(std::string_view text) const {
  const auto it = index_.find(text);
  return it == index_.end() ? -1 : it->second;
}

int32_t Tokenizer::byte_token(unsigned char b) const {
  if (kind_ == Kind::spm) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const int32_t id = find(name);
    return id >= 0 ? id : unk_;
  }
  const int32_t id = find(byte_to_unicode()[b]);
  return id >= 0 ? id : unk_;
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return std::find(eog_.begin(), eog_.end(), id) != eog_.end();
}

// Byte-level BPE of one pre-token: map bytes to GPT-2's alphabet, then merge the pair with
// the best (lowest) rank until none is left; leftmost first among equal ranks.
void Tokenizer::bpe_word(std::string_view word, std::vector<int32_t>& out) const {
  std::string mapped;
  for (unsigned char b : word) mapped += byte_to_unicode()[b];
  if (ignore_merges_)
    if (const int32_t id = find(mapped); id >= 0) {
      out.push_back(id);
      return;
    }
  // Symbols as token ids (every byte of the alphabet is a token in a byte-level vocab).
  std::vector<int32_t> sym;
  for (auto c : characters(mapped)) {
    const int32_t id = find(c);
    sym.push_back(id >= 0 ? id : unk_);
  }
  auto key = [](int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  };
  while (sym.size() > 1) {
    int32_t best = INT32_MAX, merged = -1, left = -1, right = -1;
    for (size_t i = 0; i + 1 < sym.size(); ++i) {
      const auto it = id_merges_.find(key(sym[i], sym[i + 1]));
      if (it != id_merges_.end() && it->second.first < best) {
        best = it->second.first;
        merged = it->second.second;
        left = sym[i];
        right = sym[i + 1];
      }
    }
    if (merged < 0) break;
    // Merge every non-overlapping occurrence of that pair, left to right.
    size_t w = 0;
    for (size_t i = 0; i < sym.size(); ++i) {
      if (i + 1 < sym.size() && sym[i] == left && sym[i + 1] == right) {
        sym[w++] = merged;
        ++i;
      } else {
        sym[w++] = sym[i];
      }
    }
    sym.resize(w);
  }
  for (int32_t id : sym)
    if (id >= 0) out.push_back(id);
}

// SentencePiece (llama.cpp's variant): merge the adjacent pair whose joined text is the
// best-scoring token, leftmost first among equals; symbols left without a token become
// byte tokens.
void Tokenizer::spm_text(std::string_view text, std::vector<int32_t>& out) const {
  struct Sym {
    int prev, next;
    std::string_view text;
  };
  struct Bigram {
    int left, right;
    float score;
    size_t size;
  };
  auto worse = [](const Bigram& a, const Bigram& b) { return a.score < b.score || (a.score == b.score && a.left > b.left); };
  std::vector<Sym> sym;
  int idx = 0;
  for (auto c : characters(text)) {
    sym.push_back({idx - 1, idx + 1, c});
    ++idx;
  }
  if (sym.empty()) return;
  sym.back().next = -1;
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  auto joined = [&](int l, int r) {
    return std::string_view(sym[static_cast<size_t>(l)].text.data(),
                            sym[static_cast<size_t>(l)].text.size() + sym[static_cast<size_t>(r)].text.size());
  };
  auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const auto t = joined(l, r);
    const int32_t id = find(t);
    if (id < 0) return;
    queue.push({l, r, scores_[static_cast<size_t>(id)], t.size()});
  };
  for (int i = 1; i < static_cast<int>(sym.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    auto& l = sym[static_cast<size_t>(b.left)];
    auto& r = sym[static_cast<size_t>(b.right)];
    if (l.text.empty() || r.text.empty() || l.text.size() + r.text.size() != b.size) continue;  // stale
    l.text = std::string_view(l.text.data(), l.text.size() + r.text.size());
    r.text = {};
    l.next = r.next;
    if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  // Every merge produced a token, so a symbol is a token or a single character without
  // one, which falls back to its bytes.
  auto emit = [&](std::string_view t) {
    if (const int32_t id = find(t); id >= 0) {
      out.push_back(id);
      return;
    }
    // A byte without a token (and no unknown token) is dropped rather than given an id
    // outside the vocabulary.
    for (unsigned char c : t)
      if (const int32_t id = byte_token(c); id >= 0) out.push_back(id);
  };
  for (int i = 0; i >= 0; i = sym[static_cast<size_t>(i)].next) emit(sym[static_cast<size_t>(i)].text);
}

void Tokenizer::encode_text(std::string_view text, bool first_fragment, std::vector<int32_t>& out) const {
  if (kind_ == Kind::spm) {
    std::string s = add_space_prefix_ && first_fragment ? " " : "";
    s += text;
    std::string escaped;
    for (char c : s) {
      if (c == ' ') escaped += "\xE2\x96\x81";  // ▁
      else escaped += c;
    }
    spm_text(escaped, out);
    return;
  }
  const std::string normalised = nfc_ ? nfc(text) : std::string(text);
  for (std::string_view word : pre_.split(normalised)) bpe_word(word, out);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  // Cut added/special tokens out of the text, longest first.
  std::vector<Fragment> frags{{text, -1}};
  for (const auto& a : added_) {
    if (a.special && !parse_special) continue;
    std::vector<Fragment> next;
    for (const auto& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      std::string_view rest = f.text;
      for (size_t at; (at = rest.find(a.text)) != std::string_view::npos;) {
        if (at > 0) next.push_back({rest.substr(0, at), -1});
        next.push_back({{}, a.id});
        rest = rest.substr(at + a.text.size());
      }
      if (!rest.empty()) next.push_back({rest, -1});
    }
    frags = std::move(next);
  }
  std::vector<int32_t> out;
  if (add_special && add_bos_ && bos_ >= 0) out.push_back(bos_);
  bool prev_special = true;  // SentencePiece adds its space at the start and after a special token
  for (const auto& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      prev_special = true;
    } else if (!f.text.empty()) {  // empty text gives no tokens, not a lone space
      encode_text(f.text, prev_special, out);
      prev_special = false;
    }
  }
  if (add_special && add_eos_ && eos_ >= 0) out.push_back(eos_);
  return out;
}

std::string Tokenizer::piece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) return {};
  const std::string& t = tokens_[static_cast<size_t>(id)];
  if (verbatim_[static_cast<size_t>(id)]) return t;
  std::string out;
  if (kind_ == Kind::spm) {
    if (types_[static_cast<size_t>(id)] == 6)
      if (const auto b = byte_token_value(t)) return std::string(1, static_cast<char>(*b));  // <0xXX>
    for (size_t i = 0; i < t.size();) {
      if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
        out += ' ';
        i += 3;
      } else {
        out += t[i++];
      }
    }
    return out;
  }
  for (auto c : characters(t)) {
    const auto* u = reinterpret_cast<const unsigned char*>(c.data());
    uint32_t cp = u[0];
    if (c.size() == 2) cp = ((u[0] & 0x1Fu) << 6) | (u[1] & 0x3Fu);
    else if (c.size() == 3) cp = ((u[0] & 0x0Fu) << 12) | ((u[1] & 0x3Fu) << 6) | (u[2] & 0x3Fu);
    const int b = unicode_to_byte(cp);
    if (b >= 0) out += static_cast<char>(b);
    else out.append(c);
  }
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool strip_leading_space) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string p = piece(ids[i]);  // empty for an id outside the vocabulary
    if (i == 0 && strip_leading_space && kind_ == Kind::spm && add_space_prefix_ && !p.empty() && p[0] == ' ' &&
        !verbatim_[static_cast<size_t>(ids[i])])
      p.erase(0, 1);
    out += p;
  }
  return out;
}

std::string StreamDecoder::push(int32_t id) {
  pending_ += t_.piece(id);
  const size_t hold = incomplete_utf8_tail(pending_);
  std::string ready = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return ready;
}

std::string StreamDecoder::flush() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

}  // namespace sy::tok
