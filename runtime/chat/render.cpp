// Evaluating templates: statements, expressions with Python's semantics, scoping (a for
// body is a scope, `if` is not, macros see the template's globals), limits.
#include "chat/interp.hpp"

#include <cmath>
#include <utility>

#include "chat/numbers.hpp"
#include "chat/parser.hpp"
#include "tokenizer/unicode.hpp"

namespace sy::chat {

Value Args::get(size_t i, std::string_view name, Value def) const {
  for (const auto& [k, v] : kw)
    if (k == name) return v;
  return i < pos.size() ? pos[i] : def;
}

void Interp::fail(RenderFailure::Kind kind, const std::string& msg) const {
  throw Failure{RenderFailure{kind, msg, line_, col_}};
}

void Interp::step(int line, int col) {
  line_ = line;
  col_ = col;
  if (++steps_ > opts_.max_steps)
    fail(RenderFailure::Kind::limit, "the template ran more than " + std::to_string(opts_.max_steps) + " steps");
}

void Interp::emit(std::string_view s) {
  std::string& o = out_.back();
  if (o.size() + s.size() > opts_.max_output)
    fail(RenderFailure::Kind::limit, "the output grew past " + std::to_string(opts_.max_output) + " bytes");
  o.append(s);
}

Value Interp::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (const Value* v = (*it)->find(name)) return *v;
  if (const Value* g = globals_.find(name)) return *g;
  return Value::undef(name);
}

void Interp::assign(const std::string& name, Value v) { scopes_.back()->set(name, std::move(v)); }

std::string Interp::capture(const Body& b) {
  out_.emplace_back();
  exec(b);
  std::string s = std::move(out_.back());
  out_.pop_back();
  return s;
}

Interp::Flow Interp::exec(const Body& b) {
  for (const auto& n : b) {
    const Flow f = exec(*n);
    if (f != Flow::normal) return f;
  }
  return Flow::normal;
}

namespace {

// Unpacks `item` into the loop or set targets (tuple unpacking).
void unpack(Interp& in, const std::vector<std::string>& targets, const Value& item) {
  if (targets.size() == 1) {
    in.assign(targets[0], item);
    return;
  }
  if (item.kind != Value::Kind::list || item.list->size() != targets.size())
    in.fail(RenderFailure::Kind::type, "cannot unpack " + type_name(item) + " into " + std::to_string(targets.size()) + " names");
  for (size_t i = 0; i < targets.size(); ++i) in.assign(targets[i], (*item.list)[i]);
}

// One macro or caller() call: runs in `scopes` plus a fresh scope for its parameters, one
// level deeper, and puts the caller's scopes and depth back however the call ends.
class CallFrame {
 public:
  CallFrame(Interp& in, std::vector<std::shared_ptr<Dict>> scopes) : in_(in) {
    if (static_cast<int>(in.call_depth_) >= in.opts_.max_depth)
      in.fail(RenderFailure::Kind::limit, "macros nested more than " + std::to_string(in.opts_.max_depth) + " deep");
    saved_ = std::exchange(in.scopes_, std::move(scopes));
    in.scopes_.push_back(std::make_shared<Dict>());
    ++in.call_depth_;
  }
  ~CallFrame() {
    in_.scopes_ = std::move(saved_);
    --in_.call_depth_;
  }
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

 private:
  Interp& in_;
  std::vector<std::shared_ptr<Dict>> saved_;
};

// Binds a macro's or {% call %}'s parameters: by keyword, else by position, else the default
// (evaluated at the call, inside the new scope, as Jinja2 does).
void bind_params(Interp& in, const Node& n, const Args& a) {
  for (size_t k = 0; k < n.params.size(); ++k) {
    const auto& [name, def] = n.params[k];
    Value v = a.get(k, name, Value::undef(name));
    if (v.is_undefined() && def) v = in.eval(*def);
    in.assign(name, std::move(v));
  }
}

}  // namespace

Interp::Flow Interp::exec(const Node& n) {
  step(n.line, n.col);
  switch (n.kind) {
    case Node::Kind::text: emit(n.text); return Flow::normal;
    case Node::Kind::output: {
      const Value v = eval(*n.expr);
      emit(to_str(v));
      return Flow::normal;
    }
    case Node::Kind::if_:
      for (const auto& [cond, body] : n.branches)
        if (!cond || truthy(eval(*cond))) return exec(body);
      return Flow::normal;
    case Node::Kind::for_: {
      const Value seq = eval(*n.expr);
      List items = iterate(seq);
      if (n.cond) {
        List kept;
        scopes_.push_back(std::make_shared<Dict>());
        for (auto& it : items) {
          step(n.line, n.col);
          unpack(*this, n.targets, it);
          if (truthy(eval(*n.cond))) kept.push_back(it);
        }
        scopes_.pop_back();
        items = std::move(kept);
      }
      if (items.empty()) return exec(n.else_body);
      scopes_.push_back(std::make_shared<Dict>());
      const auto len = static_cast<int64_t>(items.size());
      for (int64_t i = 0; i < len; ++i) {
        step(n.line, n.col);  // every iteration counts, even with an empty body
        Dict loop;
        loop.set("index", Value::integer(i + 1));
        loop.set("index0", Value::integer(i));
        loop.set("revindex", Value::integer(len - i));
        loop.set("revindex0", Value::integer(len - i - 1));
        loop.set("first", Value::boolean(i == 0));
        loop.set("last", Value::boolean(i == len - 1));
        loop.set("length", Value::integer(len));
        loop.set("depth", Value::integer(1));
        loop.set("depth0", Value::integer(0));
        if (i > 0) loop.set("previtem", items[static_cast<size_t>(i - 1)]);
        if (i + 1 < len) loop.set("nextitem", items[static_cast<size_t>(i + 1)]);
        loop.set("cycle", Value::callable([i](Interp&, Args& a) {
                   return a.pos.empty() ? Value::undef() : a.pos[static_cast<size_t>(i) % a.pos.size()];
                 }));
        assign("loop", Value::make_dict(std::move(loop)));
        unpack(*this, n.targets, items[static_cast<size_t>(i)]);
        if (exec(n.body) == Flow::brk) break;
      }
      scopes_.pop_back();
      return Flow::normal;
    }
    case Node::Kind::set: {
      Value v = eval(*n.expr);
      if (!n.attr.empty()) {
        const Value ns = lookup(n.text);
        if (ns.kind != Value::Kind::ns)
          fail(RenderFailure::Kind::type, "cannot assign attribute '" + n.attr + "' on " + type_name(ns) + " " + n.text +
                                              " (only namespace() objects take attributes)");
        ns.dict->set(n.attr, std::move(v));
      } else {
        unpack(*this, n.targets, v);
      }
      return Flow::normal;
    }
    case Node::Kind::set_block: {
      Value v = Value::str(capture(n.body));
      if (n.filter) v = apply_filter_chain(*n.filter, std::move(v));
      if (!n.attr.empty()) {
        const Value ns = lookup(n.text);
        if (ns.kind != Value::Kind::ns) fail(RenderFailure::Kind::type, "cannot assign an attribute of " + type_name(ns));
        ns.dict->set(n.attr, std::move(v));
      } else {
        assign(n.text, std::move(v));
      }
      return Flow::normal;
    }
    case Node::Kind::macro: assign(n.text, make_macro(n)); return Flow::normal;
    case Node::Kind::call_block: {
      // `caller()` renders the block's body in the scopes around the {% call %} (as Jinja2's
      // caller is a macro defined there), not in the called macro's: a body that calls
      // `caller()` itself then finds the outer one or none, instead of recursing forever.
      const Node* np = &n;
      captured_scopes_.insert(scopes_.begin(), scopes_.end());
      Value caller = Value::callable([np, outer = scopes_](Interp& in, Args& a) {
        const CallFrame frame(in, outer);
        bind_params(in, *np, a);
        return Value::str(in.capture(np->body));
      });
      const Expr& call = *n.expr;
      if (call.kind != Expr::Kind::call) fail(RenderFailure::Kind::type, "{% call %} needs a macro call");
      const Value fn = eval(*call.kids[0]);
      Args a = eval_args(call);
      a.kw.emplace_back("caller", caller);
      emit(to_str(invoke(fn, a, "macro")));
      return Flow::normal;
    }
    case Node::Kind::filter_block: {
      const Value v = apply_filter_chain(*n.filter, Value::str(capture(n.body)));
      emit(to_str(v));
      return Flow::normal;
    }
    case Node::Kind::scope: return exec(n.body);
    case Node::Kind::break_: return Flow::brk;
    case Node::Kind::continue_: return Flow::cont;
  }
  return Flow::normal;
}

Value Interp::make_macro(const Node& n) {
  const Node* np = &n;
  return Value::callable([np](Interp& in, Args& a) {
    // A macro sees the template's top-level names and its own parameters.
    const CallFrame frame(in, {in.scopes_.front()});
    bind_params(in, *np, a);
    for (const auto& [k, v] : a.kw)
      if (k == "caller") in.assign("caller", v);
    List varargs;
    for (size_t k = np->params.size(); k < a.pos.size(); ++k) varargs.push_back(a.pos[k]);
    in.assign("varargs", Value::make_list(std::move(varargs)));
    return Value::str(in.capture(np->body));
  });
}

Args Interp::eval_args(const Expr& e, size_t first) {
  Args a;
  for (size_t k = first; k < e.kids.size(); ++k) a.pos.push_back(eval(*e.kids[k]));
  for (const auto& [name, ex] : e.kwargs) a.kw.emplace_back(name, eval(*ex));
  return a;
}

Value Interp::invoke(const Value& fn, Args& a, const std::string& what) {
  if (fn.is_undefined())
    fail(RenderFailure::Kind::undefined, "'" + (fn.undefined_name.empty() ? what : fn.undefined_name) + "' is undefined");
  if (fn.kind != Value::Kind::callable) fail(RenderFailure::Kind::type, "'" + type_name(fn) + "' object is not callable");
  return (*fn.fn)(*this, a);
}

List Interp::iterate(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return {};
    case Value::Kind::list: return *v.list;
    case Value::Kind::dict:
    case Value::Kind::ns: {
      List keys;
      for (const auto& kv : v.dict->items) keys.push_back(Value::str(kv.first));
      return keys;
    }
    case Value::Kind::string: {
      List chars;
      const std::string& s = *v.s;
      for (size_t i = 0; i < s.size();) {
        const size_t n = std::min(tok::utf8_len(static_cast<unsigned char>(s[i])), s.size() - i);
        chars.push_back(Value::str(s.substr(i, n)));
        i += n;
      }
      return chars;
    }
    default: fail(RenderFailure::Kind::type, "'" + type_name(v) + "' object is not iterable");
  }
}

namespace {

int64_t normalise_index(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

}  // namespace

Value Interp::eval(const Expr& e) {
  // Every value a template builds comes out of an expression, a few levels at most above the
  // values that went in, so checking here bounds the nesting of everything a render holds.
  Value v = eval_expr(e);
  if (v.depth > kMaxNesting) {
    line_ = e.line;
    col_ = e.col;
    fail(RenderFailure::Kind::limit, "values nested more than " + std::to_string(kMaxNesting) +
                                         " levels deep (lists and dicts inside each other)");
  }
  return v;
}

Value Interp::eval_expr(const Expr& e) {
  step(e.line, e.col);
  switch (e.kind) {
    case Expr::Kind::literal: return e.value;
    case Expr::Kind::name: return lookup(e.name);
    case Expr::Kind::list:
    case Expr::Kind::tuple: {
      List l;
      for (const auto& k : e.kids) l.push_back(eval(*k));
      return Value::make_list(std::move(l));
    }
    case Expr::Kind::dict: {
      Dict d;
      for (size_t k = 0; k + 1 < e.kids.size(); k += 2) d.set(to_str(eval(*e.kids[k])), eval(*e.kids[k + 1]));
      return Value::make_dict(std::move(d));
    }
    case Expr::Kind::attr: {
      const Value obj = eval(*e.kids[0]);
      step(e.line, e.col);
      return attribute(obj, e.name, true);
    }
    case Expr::Kind::item: {
      const Value obj = eval(*e.kids[0]);
      const Value key = eval(*e.kids[1]);
      step(e.line, e.col);
      if (obj.is_undefined())
        fail(RenderFailure::Kind::undefined, "'" + (obj.undefined_name.empty() ? "value" : obj.undefined_name) + "' is undefined");
      if (key.kind == Value::Kind::integer || key.kind == Value::Kind::boolean) {
        const int64_t idx = key.kind == Value::Kind::boolean ? key.b : key.i;
        if (obj.kind == Value::Kind::list) {
          const int64_t i = normalise_index(idx, static_cast<int64_t>(obj.list->size()));
          if (i < 0 || i >= static_cast<int64_t>(obj.list->size())) return Value::undef();
          return (*obj.list)[static_cast<size_t>(i)];
        }
        if (obj.kind == Value::Kind::string) {
          const List chars = iterate(obj);
          const int64_t i = normalise_index(idx, static_cast<int64_t>(chars.size()));
          if (i < 0 || i >= static_cast<int64_t>(chars.size())) return Value::undef();
          return chars[static_cast<size_t>(i)];
        }
      }
      if (key.kind == Value::Kind::string) return attribute(obj, key.text(), false);
      return Value::undef();
    }
    case Expr::Kind::slice: {
      const Value obj = eval(*e.kids[0]);
      bool bad_bound = false;
      auto bound = [&](size_t k) -> std::optional<int64_t> {
        if (!e.kids[k]) return std::nullopt;
        const Value v = eval(*e.kids[k]);
        if (v.kind == Value::Kind::none) return std::nullopt;
        if (v.kind != Value::Kind::integer && v.kind != Value::Kind::boolean) bad_bound = true;
        return int_of(v);
      };
      const auto start = bound(1), stop = bound(2), stepv = bound(3);
      // Jinja's getitem turns the TypeError of a non-integer bound into undefined.
      if (bad_bound) return Value::undef();
      int64_t st = stepv.value_or(1);
      if (st == 0) fail(RenderFailure::Kind::type, "slice step cannot be zero");
      const bool is_str = obj.kind == Value::Kind::string;
      if (!is_str && obj.kind != Value::Kind::list) {
        if (obj.is_undefined()) fail(RenderFailure::Kind::undefined, "'" + obj.undefined_name + "' is undefined");
        fail(RenderFailure::Kind::type, "'" + type_name(obj) + "' object is not subscriptable");
      }
      const List src = is_str ? iterate(obj) : *obj.list;
      const auto n = static_cast<int64_t>(src.size());
      // A step longer than the sequence takes at most one item; capping it keeps i += st
      // from overflowing.
      st = std::clamp<int64_t>(st, -(n + 1), n + 1);
      auto clamp = [&](std::optional<int64_t> v, int64_t def) {
        if (!v) return def;
        int64_t x = *v < 0 ? *v + n : *v;
        if (st > 0) return std::clamp<int64_t>(x, 0, n);
        return std::clamp<int64_t>(x, -1, n - 1);
      };
      const int64_t b = clamp(start, st > 0 ? 0 : n - 1), en = clamp(stop, st > 0 ? n : -1);
      List out;
      for (int64_t i = b; st > 0 ? i < en : i > en; i += st) out.push_back(src[static_cast<size_t>(i)]);
      if (!is_str) return Value::make_list(std::move(out));
      std::string s;
      for (const auto& c : out) s += c.text();
      return Value::str(std::move(s));
    }
    case Expr::Kind::call: {
      const Expr& callee = *e.kids[0];
      Value fn = eval(callee);
      Args a = eval_args(e, 1);
      step(e.line, e.col);
      return invoke(fn, a, callee.kind == Expr::Kind::name ? callee.name : callee.kind == Expr::Kind::attr ? callee.name : "value");
    }
    case Expr::Kind::filter: return apply_filter(e, eval(*e.kids[0]));
    case Expr::Kind::test: {
      const Value v = eval(*e.kids[0]);
      Args a = eval_args(e, 1);
      step(e.line, e.col);
      const bool r = run_test(e.name, v, a);
      return Value::boolean(e.negate ? !r : r);
    }
    case Expr::Kind::unary: {
      const Value v = eval(*e.kids[0]);
      if (e.name == "not") return Value::boolean(!truthy(v));
      if (v.is_undefined()) fail(RenderFailure::Kind::undefined, "'" + (v.undefined_name.empty() ? "value" : v.undefined_name) + "' is undefined");
      if (v.kind == Value::Kind::floating) return Value::floating(e.name == "-" ? -v.f : v.f);
      if (v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean) {
        if (e.name != "-") return Value::integer(int_of(v));
        const auto r = num::neg(int_of(v));
        if (!r) overflow("-(" + to_str(v) + ")");
        return Value::integer(*r);
      }
      fail(RenderFailure::Kind::type, "bad operand type for unary " + e.name + ": '" + type_name(v) + "'");
    }
    case Expr::Kind::binary: {
      if (e.name == "and") {
        Value a = eval(*e.kids[0]);
        return truthy(a) ? eval(*e.kids[1]) : a;
      }
      if (e.name == "or") {
        Value a = eval(*e.kids[0]);
        return truthy(a) ? a : eval(*e.kids[1]);
      }
      const Value a = eval(*e.kids[0]);
      const Value b = eval(*e.kids[1]);
      step(e.line, e.col);
      return binary(e.name, a, b);
    }
    case Expr::Kind::cond: {
      if (truthy(eval(*e.kids[1]))) return eval(*e.kids[0]);
      return e.kids[2] ? eval(*e.kids[2]) : Value::undef();
    }
  }
  return Value::undef();
}

Value Interp::binary(const std::string& op, const Value& a, const Value& b) {
  auto undefined_check = [&](const Value& v) {
    if (v.is_undefined())
      fail(RenderFailure::Kind::undefined, "'" + (v.undefined_name.empty() ? "value" : v.undefined_name) + "' is undefined");
  };
  auto type_error = [&]() {
    fail(RenderFailure::Kind::type, "unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
  };
  if (op == "==") return Value::boolean(equal(a, b));
  if (op == "!=") return Value::boolean(!equal(a, b));
  if (op == "~") return Value::str(to_str(a) + to_str(b));
  if (op == "in" || op == "not in") {
    bool r = false;
    if (b.kind == Value::Kind::string) {
      if (a.kind != Value::Kind::string)
        fail(RenderFailure::Kind::type, "'in <string>' requires string as left operand, not " + type_name(a));
      r = b.text().find(a.text()) != std::string::npos;
    } else if (b.kind == Value::Kind::list) {
      for (const auto& x : *b.list) r = r || equal(x, a);
    } else if (b.is_mapping()) {
      r = a.kind == Value::Kind::string && b.dict->find(a.text()) != nullptr;
    } else if (!b.is_undefined()) {
      fail(RenderFailure::Kind::type, "argument of type '" + type_name(b) + "' is not iterable");
    }
    return Value::boolean(op == "in" ? r : !r);
  }
  undefined_check(a);
  undefined_check(b);
  if (op == "+") {
    if (a.kind == Value::Kind::string && b.kind == Value::Kind::string) {
      // Markup + str escapes the plain side (|safe gives Markup).
      if (a.safe != b.safe) return Value::str((a.safe ? a.text() : html_escape(a.text())) + (b.safe ? b.text() : html_escape(b.text())), true);
      return Value::str(a.text() + b.text(), a.safe);
    }
    if (a.kind == Value::Kind::list && b.kind == Value::Kind::list) {
      List l = *a.list;
      l.insert(l.end(), b.list->begin(), b.list->end());
      return Value::make_list(std::move(l));
    }
  }
  if (op == "*" && (a.kind == Value::Kind::string || a.kind == Value::Kind::list || b.kind == Value::Kind::string ||
                    b.kind == Value::Kind::list)) {
    const bool seq_left = a.kind == Value::Kind::string || a.kind == Value::Kind::list;
    const Value& seq = seq_left ? a : b;
    const Value& count = seq_left ? b : a;
    if (count.kind != Value::Kind::integer && count.kind != Value::Kind::boolean)
      fail(RenderFailure::Kind::type, "can't multiply sequence by non-int of type '" + type_name(count) + "'");
    return repeat(seq, int_of(count));
  }
  if (op == "<" || op == ">" || op == "<=" || op == ">=") return Value::boolean(ordered(op, a, b));
  if (!a.is_number() || !b.is_number()) type_error();
  if (a.kind != Value::Kind::floating && b.kind != Value::Kind::floating) return int_arith(op, int_of(a), int_of(b));
  const double x = a.number(), y = b.number();
  if (op == "+") return Value::floating(x + y);
  if (op == "-") return Value::floating(x - y);
  if (op == "*") return Value::floating(x * y);
  if (op == "/") {
    if (y == 0) fail(RenderFailure::Kind::type, "float division by zero");
    return Value::floating(x / y);
  }
  if (op == "//" || op == "%") {
    if (y == 0) fail(RenderFailure::Kind::type, op == "//" ? "float floor division by zero" : "float modulo");
    return Value::floating(op == "//" ? num::floordiv(x, y) : num::mod(x, y));
  }
  if (op == "**") return float_pow(x, y);
  fail(RenderFailure::Kind::type, "unsupported operator " + op);
}

Value Interp::apply_filter_chain(const Expr& f, Value input) {
  // A filter node whose operand is a placeholder (null) or a nested filter chain.
  if (!f.kids.empty() && f.kids[0]) input = apply_filter_chain(*f.kids[0], std::move(input));
  return apply_filter(f, std::move(input));
}

Result<Template> Template::parse(std::string_view source, std::string name) {
  auto body = parse_template(source, name);
  if (!body) return body.status();
  Template t;
  t.body_ = std::move(*body);
  t.name_ = std::move(name);
  return t;
}

Result<std::string> Template::render(const Value& context, const RenderOptions& opts, RenderFailure* failure) const {
  if (!context.is_mapping()) return error::invalid_argument("the template context must be a mapping of variables");
  for (const auto& [name, v] : context.dict->items)
    if (v.depth > kMaxNesting)
      return error::invalid_argument("the template context's '" + name + "' nests more than " + std::to_string(kMaxNesting) +
                                     " levels deep; flatten it");
  Interp in(opts);
  in.scopes_.push_back(std::make_shared<Dict>(*context.dict));
  in.out_.emplace_back();
  try {
    in.exec(*body_);
  } catch (const Interp::Failure& f) {
    if (failure) *failure = f.what;
    return error::invalid_argument(name_ + ":" + std::to_string(f.what.line) + ":" + std::to_string(f.what.col) + ": " +
                                   f.what.message);
  } catch (const std::bad_alloc&) {
    return error::out_of_memory(name_ + ": out of memory while rendering");
  }
  return std::move(in.out_.back());
}

}  // namespace sy::chat
