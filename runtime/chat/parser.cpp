// Jinja2 syntax with the environment transformers uses: trim_blocks, lstrip_blocks, the
// source's single trailing newline dropped, {% raw %}, loop controls and {% generation %}.
#include "chat/parser.hpp"

#include "chat/numbers.hpp"
#include "switchyard/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sy::chat {
namespace {

struct Token {
  enum class Kind { name, integer, floating, string, op, end };
  Kind kind = Kind::end;
  std::string text;
  int line = 0, col = 0;
};

// One piece of the source: literal text, or a tag's tokens.
struct Segment {
  enum class Kind { text, output, block };
  Kind kind = Kind::text;
  std::string text;
  std::vector<Token> tokens;
  int line = 1, col = 1;
};

class ParseError : public std::exception {
 public:
  ParseError(std::string m, int l, int c) : msg(std::move(m)), line(l), col(c) {}
  const char* what() const noexcept override { return msg.c_str(); }
  std::string msg;
  int line, col;
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : s_(src) {}

  std::vector<Segment> run() {
    std::vector<Segment> out;
    // Per tag: did it ask to strip the text after it, and is it a block/comment (trim_blocks)?
    bool strip_next = false, trim_next = false;
    while (pos_ < s_.size()) {
      const size_t open = find_tag(pos_);
      std::string text(s_.substr(pos_, open - pos_));
      const std::string orig = text;
      const int tl = line_, tc = col_;
      advance_to(open);
      if (strip_next) text.erase(0, text.find_first_not_of(" \t\r\n\f\v") == std::string::npos ? text.size() : text.find_first_not_of(" \t\r\n\f\v"));
      else if (trim_next && !text.empty() && text[0] == '\n') text.erase(0, 1);
      else if (trim_next && text.size() >= 2 && text[0] == '\r' && text[1] == '\n') text.erase(0, 2);
      strip_next = trim_next = false;
      if (open >= s_.size()) {
        push_text(out, std::move(text), tl, tc);
        break;
      }
      const char kind = s_[open + 1];  // '{', '%' or '#'
      const bool minus = open + 2 < s_.size() && s_[open + 2] == '-';
      const bool plus = open + 2 < s_.size() && s_[open + 2] == '+';
      if (minus) {
        const size_t keep = text.find_last_not_of(" \t\r\n\f\v");
        text.erase(keep == std::string::npos ? 0 : keep + 1);
      } else if (kind != '{' && !plus) {
        // lstrip_blocks: spaces and tabs from the line start (in the source) up to a block
        // tag or comment.
        const size_t nl = orig.find_last_of('\n');
        const bool at_line_start = nl != std::string::npos || tc == 1;
        const size_t start = nl == std::string::npos ? 0 : nl + 1;
        if (at_line_start && orig.find_first_not_of(" \t", start) == std::string::npos) {
          const size_t n = std::min(text.size(), orig.size() - start);
          text.erase(text.size() - n);
        }
      }
      push_text(out, std::move(text), tl, tc);
      const int line = line_, col = col_;
      advance_to(open + 2 + (minus || plus ? 1 : 0));
      if (kind == '#') {
        const size_t end = s_.find("#}", pos_);
        if (end == std::string_view::npos) throw ParseError("this comment is never closed with #}", line, col);
        strip_next = end > 0 && s_[end - 1] == '-';
        trim_next = !strip_next;
        advance_to(end + 2);
        continue;
      }
      Segment seg;
      seg.kind = kind == '{' ? Segment::Kind::output : Segment::Kind::block;
      seg.line = line;
      seg.col = col;
      const char* close = kind == '{' ? "}}" : "%}";
      bool closed = false;
      while (pos_ < s_.size()) {
        skip_space();
        if (s_.compare(pos_, 2, close) == 0 || (s_[pos_] == '-' && s_.compare(pos_ + 1, 2, close) == 0)) {
          strip_next = s_[pos_] == '-';
          advance_to(pos_ + (strip_next ? 3 : 2));
          trim_next = kind == '%' && !strip_next;
          closed = true;
          break;
        }
        seg.tokens.push_back(token());
      }
      if (!closed)
        throw ParseError(std::string("this tag is never closed with ") + close, line, col);
      // {% raw %}: everything up to {% endraw %} is text.
      if (seg.kind == Segment::Kind::block && seg.tokens.size() == 1 && seg.tokens[0].text == "raw") {
        size_t at = pos_;
        for (;;) {
          at = s_.find("{%", at);
          if (at == std::string_view::npos) throw ParseError("{% raw %} is never closed with {% endraw %}", line, col);
          size_t k = at + 2;
          const bool m = k < s_.size() && s_[k] == '-';
          if (m || (k < s_.size() && s_[k] == '+')) ++k;
          while (k < s_.size() && std::isspace(static_cast<unsigned char>(s_[k]))) ++k;
          if (s_.compare(k, 6, "endraw") == 0) {
            std::string raw(s_.substr(pos_, at - pos_));
            if (strip_next) raw.erase(0, raw.find_first_not_of(" \t\r\n") == std::string::npos ? raw.size() : raw.find_first_not_of(" \t\r\n"));
            else if (trim_next && !raw.empty() && raw[0] == '\n') raw.erase(0, 1);
            if (m) raw.erase(raw.find_last_not_of(" \t\r\n") == std::string::npos ? 0 : raw.find_last_not_of(" \t\r\n") + 1);
            push_text(out, std::move(raw), line, col);
            const size_t end = s_.find("%}", k);
            if (end == std::string_view::npos) throw ParseError("{% endraw is never closed with %}", line, col);
            strip_next = s_[end - 1] == '-';
            trim_next = !strip_next;
            advance_to(end + 2);
            break;
          }
          at += 2;
        }
        continue;
      }
      out.push_back(std::move(seg));
    }
    return out;
  }

 private:
  static void push_text(std::vector<Segment>& out, std::string text, int l, int c) {
    if (text.empty()) return;
    Segment seg;
    seg.text = std::move(text);
    seg.line = l;
    seg.col = c;
    out.push_back(std::move(seg));
  }

  size_t find_tag(size_t from) const {
    for (size_t i = s_.find('{', from); i != std::string_view::npos; i = s_.find('{', i + 1))
      if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
    return s_.size();
  }
  void advance_to(size_t p) {
    for (; pos_ < p && pos_ < s_.size(); ++pos_) {
      if (s_[pos_] == '\n') {
        ++line_;
        col_ = 1;
      } else {
        ++col_;
      }
    }
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) advance_to(pos_ + 1);
  }
  Token token() {
    Token t;
    t.line = line_;
    t.col = col_;
    const char c = s_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t e = pos_;
      while (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) ++e;
      t.kind = Token::Kind::name;
      t.text = std::string(s_.substr(pos_, e - pos_));
      advance_to(e);
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const size_t e = number(t);
      advance_to(e);
      return t;
    }
    if (c == '"' || c == '\'') {
      t.kind = Token::Kind::string;
      size_t e = pos_ + 1;
      for (; e < s_.size() && s_[e] != c; ++e)
        if (s_[e] == '\\' && e + 1 < s_.size()) ++e;
      if (e >= s_.size()) throw ParseError("this string is never closed", t.line, t.col);
      std::string err;
      if (!decode_string(s_.substr(pos_ + 1, e - pos_ - 1), t.text, err)) throw ParseError(err, t.line, t.col);
      advance_to(e + 1);
      return t;
    }
    static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
                                "(", ")", "[", "]", "{", "}", ",", ".", ":", "|", "="};
    for (const char* op : ops)
      if (s_.compare(pos_, std::strlen(op), op) == 0) {
        t.kind = Token::Kind::op;
        t.text = op;
        advance_to(pos_ + std::strlen(op));
        return t;
      }
    throw ParseError(std::string("unexpected character '") + c + "'", line_, col_);
  }

  // (\d+_)*\d+ from `i`: the end, or npos.
  size_t digit_run(size_t i) const {
    if (i >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i]))) return std::string_view::npos;
    for (;;) {
      while (i < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i]))) ++i;
      if (i + 1 < s_.size() && s_[i] == '_' && std::isdigit(static_cast<unsigned char>(s_[i + 1]))) {
        ++i;
        continue;
      }
      return i;
    }
  }

  // A number with Jinja's float_re and integer_re (tried in that order): floats need a
  // fraction or an exponent; integers are 0b/0o/0x-prefixed, or decimal without leading
  // zeros. The token keeps the digits without underscores (and the prefix).
  size_t number(Token& t) const {
    const size_t npos = std::string_view::npos;
    auto strip_underscores = [&](size_t e) {
      for (char ch : s_.substr(pos_, e - pos_))
        if (ch != '_') t.text += ch;
      return e;
    };
    auto exponent = [&](size_t i) -> size_t {
      if (i >= s_.size() || (s_[i] != 'e' && s_[i] != 'E')) return npos;
      ++i;
      if (i < s_.size() && (s_[i] == '+' || s_[i] == '-')) ++i;
      return digit_run(i);
    };
    // (?<!\.): a number right after a dot is an attribute index (x.0.1), never a float.
    const bool after_dot = pos_ > 0 && s_[pos_ - 1] == '.';
    const size_t d = digit_run(pos_);
    if (!after_dot) {
      size_t f = npos;
      if (d < s_.size() && s_[d] == '.') f = digit_run(d + 1);
      const size_t ex = exponent(f != npos ? f : d);
      if (ex != npos || f != npos) {
        t.kind = Token::Kind::floating;
        return strip_underscores(ex != npos ? ex : f);
      }
    }
    t.kind = Token::Kind::integer;
    if (s_[pos_] == '0' && pos_ + 1 < s_.size()) {
      const char p = static_cast<char>(s_[pos_ + 1] | 0x20);
      const int base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 0;
      if (base != 0) {
        // (_?digit)+ in that base
        size_t i = pos_ + 2;
        for (;;) {
          const size_t k = i < s_.size() && s_[i] == '_' ? i + 1 : i;
          if (k >= s_.size()) break;
          const char ch = static_cast<char>(s_[k] | 0x20);
          const int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : 99;
          if (v >= base) break;
          i = k + 1;
        }
        if (i > pos_ + 2) return strip_underscores(i);
      }
      // 0(_?0)*
      size_t i = pos_ + 1;
      while (i < s_.size() && (s_[i] == '0' || (s_[i] == '_' && i + 1 < s_.size() && s_[i + 1] == '0'))) i += s_[i] == '_' ? 2 : 1;
      return strip_underscores(i);
    }
    return strip_underscores(d);
  }

  // A string literal's body as Jinja decodes it: newlines normalised, then
  // .encode("ascii", "backslashreplace").decode("unicode-escape"). So Python's escapes
  // work (\n \t \xXX \uXXXX \UXXXXXXXX \ooo ...), an unknown escape stays as written, and a
  // backslash before a non-ASCII character turns that character into its \x/\u/\U text.
  static bool decode_string(std::string_view raw, std::string& out, std::string& err) {
    std::string src;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        src += '\n';
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      } else {
        src += raw[i];
      }
    }
    auto hex = [&](size_t at, size_t n, uint32_t& cp) {
      cp = 0;
      for (size_t k = 0; k < n; ++k) {
        if (at + k >= src.size() || !std::isxdigit(static_cast<unsigned char>(src[at + k]))) return false;
        const char ch = static_cast<char>(src[at + k] | 0x20);
        cp = cp * 16 + static_cast<uint32_t>(ch <= '9' ? ch - '0' : ch - 'a' + 10);
      }
      return true;
    };
    for (size_t i = 0; i < src.size(); ++i) {
      if (src[i] != '\\' || i + 1 >= src.size()) {
        out += src[i];
        continue;
      }
      const char n = src[++i];
      switch (n) {
        case '\n': break;  // a backslash-newline continues the line
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t len = n == 'x' ? 2 : n == 'u' ? 4 : 8;
          uint32_t cp = 0;
          if (!hex(i + 1, len, cp)) {
            err = std::string("truncated \\") + n + std::string(len, 'X') + " escape";
            return false;
          }
          if (cp > 0x10FFFF) {
            err = "illegal Unicode character";
            return false;
          }
          append_utf8(out, cp);
          i += len;
          break;
        }
        case 'N':
          err = "\\N{...} escapes are not supported; write the character itself or a \\U escape";
          return false;
        default:
          if (n >= '0' && n <= '7') {
            uint32_t cp = 0;
            size_t k = i;
            for (; k < src.size() && k < i + 3 && src[k] >= '0' && src[k] <= '7'; ++k) cp = cp * 8 + static_cast<uint32_t>(src[k] - '0');
            append_utf8(out, cp);
            i = k - 1;
          } else if (static_cast<unsigned char>(n) >= 0x80) {
            // backslashreplace wrote this character as \xe9 / \u20ac / \U0001f600, and its
            // backslash pairs with ours: a backslash, then the hex text.
            const auto c0 = static_cast<unsigned char>(n);
            size_t len = c0 >= 0xF0 ? 4 : c0 >= 0xE0 ? 3 : c0 >= 0xC0 ? 2 : 1;
            if (i + len > src.size()) len = src.size() - i;
            uint32_t cp = len == 1 ? c0 : c0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
            for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(src[i + k]) & 0x3F);
            char buf[16];
            if (cp < 0x100) std::snprintf(buf, sizeof buf, "x%02x", cp);
            else if (cp < 0x10000) std::snprintf(buf, sizeof buf, "u%04x", cp);
            else std::snprintf(buf, sizeof buf, "U%08x", cp);
            out += '\\';
            out += buf;
            i += len - 1;
          } else {
            out += '\\';
            out += n;
          }
      }
    }
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

class Parser {
 public:
  explicit Parser(std::vector<Segment> segs) : segs_(std::move(segs)) {}

  Body parse_all() {
    Body b = body({});
    if (seg_ < segs_.size()) fail_at(segs_[seg_], "unexpected '" + segs_[seg_].tokens[0].text + "' here");
    return b;
  }

 private:
  [[noreturn]] static void fail_at(const Segment& s, const std::string& m) { throw ParseError(m, s.line, s.col); }
  [[noreturn]] void fail(const std::string& m) const {
    const Token& t = peek();
    throw ParseError(m, t.line ? t.line : segs_[seg_ - 1].line, t.line ? t.col : segs_[seg_ - 1].col);
  }

  // --- statements -----------------------------------------------------------------
  // Parses nodes until a block tag whose keyword is in `ends` (left unconsumed).
  Body body(std::initializer_list<const char*> ends) {
    Body out;
    while (seg_ < segs_.size()) {
      const Segment& s = segs_[seg_];
      if (s.kind == Segment::Kind::text) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::text;
        n->text = s.text;
        n->line = s.line;
        n->col = s.col;
        out.push_back(std::move(n));
        ++seg_;
        continue;
      }
      if (s.kind == Segment::Kind::output) {
        begin(s);
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::output;
        n->line = s.line;
        n->col = s.col;
        n->expr = expression();
        finish_tag();
        out.push_back(std::move(n));
        continue;
      }
      if (s.tokens.empty()) fail_at(s, "empty block tag");
      const std::string& kw = s.tokens[0].text;
      for (const char* e : ends)
        if (kw == e) return out;
      out.push_back(statement());
    }
    return out;
  }

  void begin(const Segment& s) {
    toks_ = &s.tokens;
    tok_ = 0;
    ++seg_;
  }
  void finish_tag() {
    if (tok_ < toks_->size()) fail("unexpected '" + peek().text + "' at the end of this tag");
  }
  // Consumes a closing tag `{% kw %}`.
  void expect_tag(const char* kw) {
    if (seg_ >= segs_.size()) throw ParseError(std::string("missing {% ") + kw + " %}", segs_.empty() ? 1 : segs_.back().line, 1);
    begin(segs_[seg_]);
    expect_name(kw);
    finish_tag();
  }
  [[nodiscard]] bool at_tag(const char* kw) const {
    return seg_ < segs_.size() && segs_[seg_].kind == Segment::Kind::block && !segs_[seg_].tokens.empty() &&
           segs_[seg_].tokens[0].text == kw;
  }

  NodePtr statement() {
    const Segment& s = segs_[seg_];
    begin(s);
    auto n = std::make_unique<Node>();
    n->line = s.line;
    n->col = s.col;
    const std::string kw = next().text;
    if (kw == "if") {
      ExprPtr c = expression();
      finish_tag();
      Body b = body({"elif", "else", "endif"});
      n->kind = Node::Kind::if_;
      n->branches.emplace_back(std::move(c), std::move(b));
      for (;;) {
        if (seg_ >= segs_.size()) fail_at(s, "this {% if %} is never closed with {% endif %}");
        begin(segs_[seg_]);
        const std::string k = next().text;
        if (k == "elif") {
          ExprPtr ec = expression();
          finish_tag();
          n->branches.emplace_back(std::move(ec), body({"elif", "else", "endif"}));
        } else if (k == "else") {
          finish_tag();
          n->branches.emplace_back(nullptr, body({"endif"}));
        } else {
          finish_tag();
          break;
        }
      }
    } else if (kw == "for") {
      n->kind = Node::Kind::for_;
      do {
        n->targets.push_back(expect_ident());
      } while (accept(","));
      expect_name("in");
      n->expr = expression(false);
      if (accept_name("if")) n->cond = expression(false);
      accept_name("recursive");
      finish_tag();
      n->body = body({"else", "endfor"});
      if (seg_ >= segs_.size()) fail_at(s, "this {% for %} is never closed with {% endfor %}");
      if (at_tag("else")) {
        expect_tag("else");
        n->else_body = body({"endfor"});
      }
      if (seg_ >= segs_.size()) fail_at(s, "this {% for %} is never closed with {% endfor %}");
      expect_tag("endfor");
    } else if (kw == "set") {
      n->text = expect_ident();
      if (accept(".")) {
        n->attr = expect_ident();
      } else {
        n->targets.push_back(n->text);
        while (accept(",")) n->targets.push_back(expect_ident());
      }
      if (accept("=")) {
        n->kind = Node::Kind::set;
        n->expr = expression();
        finish_tag();
      } else {
        n->kind = Node::Kind::set_block;
        if (accept("|")) n->filter = filter_chain(nullptr);
        finish_tag();
        n->body = body({"endset"});
        if (seg_ >= segs_.size()) fail_at(s, "this {% set %} is never closed with {% endset %}");
        expect_tag("endset");
      }
    } else if (kw == "macro") {
      n->kind = Node::Kind::macro;
      n->text = expect_ident();
      expect("(");
      params(n->params);
      finish_tag();
      n->body = body({"endmacro"});
      if (seg_ >= segs_.size()) fail_at(s, "this {% macro %} is never closed with {% endmacro %}");
      expect_tag("endmacro");
    } else if (kw == "call") {
      n->kind = Node::Kind::call_block;
      if (accept("(")) params(n->params);
      n->expr = expression();
      finish_tag();
      n->body = body({"endcall"});
      if (seg_ >= segs_.size()) fail_at(s, "this {% call %} is never closed with {% endcall %}");
      expect_tag("endcall");
    } else if (kw == "filter") {
      n->kind = Node::Kind::filter_block;
      n->filter = filter_chain(nullptr);
      finish_tag();
      n->body = body({"endfilter"});
      if (seg_ >= segs_.size()) fail_at(s, "this {% filter %} is never closed with {% endfilter %}");
      expect_tag("endfilter");
    } else if (kw == "generation") {  // transformers' assistant-mask tag: renders its body
      n->kind = Node::Kind::scope;
      finish_tag();
      n->body = body({"endgeneration"});
      if (seg_ >= segs_.size()) fail_at(s, "this {% generation %} is never closed with {% endgeneration %}");
      expect_tag("endgeneration");
    } else if (kw == "break" || kw == "continue") {
      n->kind = kw == "break" ? Node::Kind::break_ : Node::Kind::continue_;
      finish_tag();
    } else {
      fail_at(s, "unknown tag '" + kw + "'");
    }
    return n;
  }

  void params(std::vector<std::pair<std::string, ExprPtr>>& out) {
    if (accept(")")) return;
    do {
      std::string name = expect_ident();
      ExprPtr def;
      if (accept("=")) def = expression();
      out.emplace_back(std::move(name), std::move(def));
    } while (accept(","));
    expect(")");
  }

  // --- tokens ---------------------------------------------------------------------
  [[nodiscard]] const Token& peek(size_t ahead = 0) const {
    static const Token end;
    return tok_ + ahead < toks_->size() ? (*toks_)[tok_ + ahead] : end;
  }
  const Token& next() {
    if (tok_ >= toks_->size()) fail("this tag ends before its expression is complete");
    return (*toks_)[tok_++];
  }
  bool accept(const char* op) {
    if (peek().kind == Token::Kind::op && peek().text == op) {
      ++tok_;
      return true;
    }
    return false;
  }
  bool accept_name(const char* n) {
    if (peek().kind == Token::Kind::name && peek().text == n) {
      ++tok_;
      return true;
    }
    return false;
  }
  void expect(const char* op) {
    if (!accept(op)) fail(std::string("expected '") + op + "'" + (peek().kind == Token::Kind::end ? "" : ", found '" + peek().text + "'"));
  }
  void expect_name(const char* n) {
    if (!accept_name(n)) fail(std::string("expected '") + n + "'");
  }
  std::string expect_ident() {
    if (peek().kind != Token::Kind::name) fail("expected a name");
    return next().text;
  }

  // --- expressions (Jinja's precedence) ---------------------------------------------
  ExprPtr node(Expr::Kind k, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = at.line;
    e->col = at.col;
    return e;
  }
  ExprPtr binary(const std::string& op, ExprPtr a, ExprPtr b, const Token& at) {
    auto e = node(Expr::Kind::binary, at);
    e->name = op;
    e->kids.push_back(std::move(a));
    e->kids.push_back(std::move(b));
    return e;
  }

  ExprPtr expression(bool with_cond = true) {
    if (++depth_ > 200) fail("expression nested too deeply");
    ExprPtr e = or_expr();
    if (with_cond) {
      while (peek().kind == Token::Kind::name && peek().text == "if") {
        const Token at = next();
        auto c = node(Expr::Kind::cond, at);
        c->kids.push_back(std::move(e));
        c->kids.push_back(or_expr());
        c->kids.push_back(accept_name("else") ? expression() : nullptr);
        e = std::move(c);
      }
    }
    --depth_;
    return e;
  }
  ExprPtr or_expr() {
    ExprPtr e = and_expr();
    while (peek().kind == Token::Kind::name && peek().text == "or") {
      const Token at = next();
      e = binary("or", std::move(e), and_expr(), at);
    }
    return e;
  }
  ExprPtr and_expr() {
    ExprPtr e = not_expr();
    while (peek().kind == Token::Kind::name && peek().text == "and") {
      const Token at = next();
      e = binary("and", std::move(e), not_expr(), at);
    }
    return e;
  }
  ExprPtr not_expr() {
    if (peek().kind == Token::Kind::name && peek().text == "not") {
      const Token at = next();
      auto e = node(Expr::Kind::unary, at);
      e->name = "not";
      e->kids.push_back(not_expr());
      return e;
    }
    return compare();
  }
  ExprPtr compare() {
    ExprPtr e = math1();
    for (;;) {
      const Token& t = peek();
      if (t.kind == Token::Kind::op && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" ||
                                        t.text == "<=" || t.text == ">=")) {
        const Token at = next();
        e = binary(at.text, std::move(e), math1(), at);
      } else if (t.kind == Token::Kind::name && t.text == "in") {
        const Token at = next();
        e = binary("in", std::move(e), math1(), at);
      } else if (t.kind == Token::Kind::name && t.text == "not" && peek(1).kind == Token::Kind::name && peek(1).text == "in") {
        const Token at = next();
        next();
        e = binary("not in", std::move(e), math1(), at);
      } else {
        return e;
      }
    }
  }
  ExprPtr math1() {
    ExprPtr e = concat();
    while (peek().kind == Token::Kind::op && (peek().text == "+" || peek().text == "-")) {
      const Token at = next();
      e = binary(at.text, std::move(e), concat(), at);
    }
    return e;
  }
  ExprPtr concat() {
    ExprPtr e = math2();
    while (peek().kind == Token::Kind::op && peek().text == "~") {
      const Token at = next();
      e = binary("~", std::move(e), math2(), at);
    }
    return e;
  }
  ExprPtr math2() {
    ExprPtr e = pow();
    while (peek().kind == Token::Kind::op &&
           (peek().text == "*" || peek().text == "/" || peek().text == "//" || peek().text == "%")) {
      const Token at = next();
      e = binary(at.text, std::move(e), pow(), at);
    }
    return e;
  }
  ExprPtr pow() {
    ExprPtr e = unary(true);
    while (peek().kind == Token::Kind::op && peek().text == "**") {
      const Token at = next();
      e = binary("**", std::move(e), unary(true), at);
    }
    return e;
  }
  ExprPtr unary(bool with_filter) {
    ExprPtr e;
    if (peek().kind == Token::Kind::op && (peek().text == "-" || peek().text == "+")) {
      const Token at = next();
      // -9223372036854775808 is the one literal whose magnitude alone does not fit.
      if (at.text == "-" && peek().kind == Token::Kind::integer && peek().text == "9223372036854775808") {
        e = node(Expr::Kind::literal, at);
        e->value = Value::integer(INT64_MIN);
        next();
        e = postfix(std::move(e));
      } else {
        e = node(Expr::Kind::unary, at);
        e->name = at.text;
        e->kids.push_back(unary(false));
      }
    } else {
      e = postfix(primary());
    }
    if (with_filter) e = filters(std::move(e));
    return e;
  }
  ExprPtr primary() {
    const Token t = next();
    switch (t.kind) {
      case Token::Kind::integer: {
        auto e = node(Expr::Kind::literal, t);
        int64_t v = 0;
        if (num::parse_int(t.text, 0, v) != num::Parse::ok)
          throw ParseError("integer overflow: " + t.text + " is beyond the 64-bit integers templates support", t.line, t.col);
        e->value = Value::integer(v);
        return e;
      }
      case Token::Kind::floating: {
        auto e = node(Expr::Kind::literal, t);
        e->value = Value::floating(std::strtod(t.text.c_str(), nullptr));  // 1e400 is inf, as in Python
        return e;
      }
      case Token::Kind::string: {
        auto e = node(Expr::Kind::literal, t);
        std::string s = t.text;
        while (peek().kind == Token::Kind::string) s += next().text;  // adjacent literals join
        e->value = Value::str(s);
        return e;
      }
      case Token::Kind::name: {
        auto e = node(Expr::Kind::literal, t);
        if (t.text == "true" || t.text == "True") e->value = Value::boolean(true);
        else if (t.text == "false" || t.text == "False") e->value = Value::boolean(false);
        else if (t.text == "none" || t.text == "None") e->value = Value::none();
        else {
          e->kind = Expr::Kind::name;
          e->name = t.text;
        }
        return e;
      }
      case Token::Kind::op:
        if (t.text == "(") {
          if (accept(")")) return node(Expr::Kind::tuple, t);
          ExprPtr first = expression();
          if (!accept(",")) {
            expect(")");
            return first;
          }
          auto tup = node(Expr::Kind::tuple, t);
          tup->kids.push_back(std::move(first));
          comma_list(")", [&] { tup->kids.push_back(expression()); });
          return tup;
        }
        if (t.text == "[") {
          auto l = node(Expr::Kind::list, t);
          comma_list("]", [&] { l->kids.push_back(expression()); });
          return l;
        }
        if (t.text == "{") {
          auto d = node(Expr::Kind::dict, t);
          comma_list("}", [&] {
            d->kids.push_back(expression());
            expect(":");
            d->kids.push_back(expression());
          });
          return d;
        }
        break;
      default: break;
    }
    throw ParseError("unexpected '" + t.text + "'", t.line, t.col);
  }
  void call_args(Expr& e) {
    comma_list(")", [&] {
      if (peek().kind == Token::Kind::name && peek(1).kind == Token::Kind::op && peek(1).text == "=") {
        std::string k = next().text;
        next();
        e.kwargs.emplace_back(std::move(k), expression());
      } else {
        e.kids.push_back(expression());
      }
    });
  }
  // Items separated by commas up to `close`, which has not been read yet; a trailing comma
  // is allowed, as in Python.
  template <class Item>
  void comma_list(const char* close, Item item) {
    while (!accept(close)) {
      item();
      if (!accept(",")) {
        expect(close);
        break;
      }
    }
  }
  ExprPtr postfix(ExprPtr e) {
    for (;;) {
      if (peek().kind != Token::Kind::op) return e;
      const Token at = peek();
      if (at.text == ".") {
        next();
        auto a = node(Expr::Kind::attr, at);
        if (peek().kind == Token::Kind::integer) a->name = next().text;
        else a->name = expect_ident();
        a->kids.push_back(std::move(e));
        e = std::move(a);
      } else if (at.text == "[") {
        next();
        ExprPtr parts[3];
        bool slice = false;
        for (int k = 0; k < 3; ++k) {
          if (!(peek().kind == Token::Kind::op && (peek().text == ":" || peek().text == "]"))) parts[k] = expression();
          if (k < 2 && accept(":")) {
            slice = true;
            continue;
          }
          break;
        }
        expect("]");
        auto s = node(slice ? Expr::Kind::slice : Expr::Kind::item, at);
        s->kids.push_back(std::move(e));
        if (slice) {
          for (auto& p : parts) s->kids.push_back(std::move(p));
        } else {
          if (!parts[0]) fail("empty subscript");
          s->kids.push_back(std::move(parts[0]));
        }
        e = std::move(s);
      } else if (at.text == "(") {
        next();
        auto c = node(Expr::Kind::call, at);
        c->line = e->line;  // errors point at what is called, not at its '('
        c->col = e->col;
        c->kids.push_back(std::move(e));
        call_args(*c);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }
  // |filter(args) chains and `is [not] test`.
  ExprPtr filters(ExprPtr e) {
    for (;;) {
      if (accept("|")) {
        e = filter_chain(std::move(e), true);
      } else if (peek().kind == Token::Kind::name && peek().text == "is") {
        const Token at = next();
        auto t = node(Expr::Kind::test, at);
        t->negate = accept_name("not");
        t->name = expect_ident();
        t->kids.push_back(std::move(e));
        if (accept("(")) {
          call_args(*t);
        } else {
          const Token& p = peek();
          const bool arg = p.kind == Token::Kind::integer || p.kind == Token::Kind::floating ||
                           p.kind == Token::Kind::string ||
                           (p.kind == Token::Kind::name && p.text != "else" && p.text != "or" && p.text != "and" &&
                            p.text != "not" && p.text != "in" && p.text != "is" && p.text != "if");
          if (arg) t->kids.push_back(postfix(primary()));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }
  // One filter (after '|'), applied to e (null: a filter block's placeholder).
  ExprPtr filter_chain(ExprPtr e, bool single = false) {
    const Token at = peek();
    auto f = node(Expr::Kind::filter, at);
    f->name = expect_ident();
    while (accept(".")) f->name += "." + expect_ident();
    f->kids.push_back(std::move(e));
    if (accept("(")) call_args(*f);
    if (!single && accept("|")) return filter_chain(std::move(f));
    return f;
  }

  std::vector<Segment> segs_;
  size_t seg_ = 0;
  const std::vector<Token>* toks_ = nullptr;
  size_t tok_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::shared_ptr<const Body>> parse_template(std::string_view source, const std::string& name) {
  std::string src(source);
  if (!src.empty() && src.back() == '\n') src.pop_back();  // keep_trailing_newline=False
  try {
    Lexer lex(src);
    Parser p(lex.run());
    return std::make_shared<const Body>(p.parse_all());
  } catch (const ParseError& e) {
    return error::invalid_argument(name + ":" + std::to_string(e.line) + ":" + std::to_string(e.col) + ": " + e.msg);
  } catch (const std::exception& e) {
    return error::invalid_argument(name + ": " + e.what());
  }
}

}  // namespace sy::chat
