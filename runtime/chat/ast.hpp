// The parsed form of a template: expression and statement trees, each node with its
// source line and column for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.hpp"

namespace sy::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind { literal, name, list, tuple, dict, attr, item, slice, call, filter, test, unary, binary, cond };
  Kind kind = Kind::literal;
  std::string name;  // name, attribute, filter/test name, operator
  Value value;       // literal
  std::vector<ExprPtr> kids;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  bool negate = false;  // "is not"
  int line = 0, col = 0;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind { text, output, if_, for_, set, set_block, macro, call_block, filter_block, break_, continue_, scope };
  Kind kind = Kind::text;
  std::string text;                 // text; set: the name; macro: its name
  std::string attr;                 // set ns.attr
  std::vector<std::string> targets; // for / set: names (tuple unpacking)
  ExprPtr expr;                     // output value, for iterable, set value, call_block call
  ExprPtr cond;                     // for ... if cond
  std::vector<std::pair<ExprPtr, Body>> branches;  // if / elif / else (null condition)
  Body body, else_body;
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro / caller parameters with defaults
  ExprPtr filter;                   // filter block: a filter expression applied to the body
  int line = 0, col = 0;
};

}  // namespace sy::chat
