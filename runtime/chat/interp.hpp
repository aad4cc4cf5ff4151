// The template interpreter's state, shared by the statement/expression evaluator
// (render.cpp) and the built-in filters, tests, methods and globals (builtins.cpp).
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "chat/template.hpp"

namespace sy::chat {

/// Call arguments: positional, then keyword.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  /// Keyword `name`, else positional `i`, else `def`.
  [[nodiscard]] Value get(size_t i, std::string_view name, Value def = Value::undef()) const;
};

class Interp {
 public:
  enum class Flow { normal, brk, cont };
  struct Failure {
    RenderFailure what;
  };

  explicit Interp(const RenderOptions& o);
  /// Empties every namespace() of the render: `{% set ns.x = ns %}` is legal Jinja and makes a
  /// reference cycle that Python's collector frees and shared_ptr would leak. Empties every
  /// scope a caller() keeps too, for the same reason.
  ~Interp();
  Interp(const Interp&) = delete;
  Interp& operator=(const Interp&) = delete;

  Flow exec(const Body& b);
  Flow exec(const Node& n);
  Value eval(const Expr& e);
  std::string capture(const Body& b);
  void assign(const std::string& name, Value v);
  [[nodiscard]] Value lookup(const std::string& name) const;
  [[noreturn]] void fail(RenderFailure::Kind kind, const std::string& msg) const;
  List iterate(const Value& v);
  Value invoke(const Value& fn, Args& a, const std::string& what);

  /// Counts one unit of work against the step limit (for built-ins that loop).
  void count_step() { step(line_, col_); }

  // builtins.cpp
  Value attribute(const Value& obj, const std::string& name, bool attr_first);
  Value apply_filter(const Expr& f, Value input);
  // filters.cpp, tests.cpp
  Value call_filter(const std::string& name, const Value& v, Args& a);
  bool run_test(const std::string& name, const Value& v, const Args& a);

  // render.cpp (binary) and arith.cpp: Python's operators on numbers and sequences; errors
  // carry the position.
  Value binary(const std::string& op, const Value& a, const Value& b);
  Value int_arith(const std::string& op, int64_t x, int64_t y);
  Value float_pow(double x, double y);
  Value repeat(const Value& seq, int64_t n);
  bool ordered(const std::string& op, const Value& a, const Value& b);
  [[noreturn]] void overflow(const std::string& expression) const;
  /// Refuses an allocation of `n` bytes of text past the output limit (padding, indents).
  void check_size(size_t n, const char* what) const;

  std::vector<std::shared_ptr<Dict>> scopes_;  // [0]: the template's top level
  std::vector<std::string> out_;               // output buffers (captures nest)
  std::vector<std::shared_ptr<Dict>> namespaces_;  // every namespace() made, emptied at the end
  /// Every scope a caller() closure keeps, emptied at the end too: a caller stored in one of
  /// the scopes it keeps (through a namespace, `{% set c = ns.caller %}`) is a cycle.
  std::unordered_set<std::shared_ptr<Dict>> captured_scopes_;
  const RenderOptions& opts_;
  size_t call_depth_ = 0;

 private:
  void step(int line, int col);
  void emit(std::string_view s);
  Value apply_filter_chain(const Expr& f, Value input);
  Value eval_expr(const Expr& e);
  Value make_macro(const Node& n);
  Args eval_args(const Expr& e, size_t first = 1);

  Dict globals_;
  int64_t steps_ = 0;
  int line_ = 0, col_ = 0;
};

}  // namespace sy::chat
