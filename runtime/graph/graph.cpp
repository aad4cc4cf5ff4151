#include "graph/graph.hpp"

#include <stdexcept>
#include <string>

namespace sy::graph {

void set_contiguous_strides(GraphTensor& t) {
  const auto& ti = storage_type_info(t.type);
  t.nb[0] = static_cast<int64_t>(ti.block_bytes);
  t.nb[1] = static_cast<int64_t>(ti.block_bytes) * (t.ne[0] / ti.block_size);
  t.nb[2] = t.nb[1] * t.ne[1];
  t.nb[3] = t.nb[2] * t.ne[2];
}

void Graph::clear() {
  tensors_.clear();
  info_.clear();
  nodes_.clear();
  taps_.clear();
}

TensorId Graph::add(const GraphTensor& t, const TensorInfo& i) {
  tensors_.push_back(t);
  info_.push_back(i);
  return static_cast<TensorId>(tensors_.size() - 1);
}

TensorId Graph::persistent(const GraphTensor& t, int device) {
  TensorInfo i;
  i.origin = Origin::persistent;
  i.device = device;
  return add(t, i);
}

TensorId Graph::input(StorageType type, const void* data, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
  GraphTensor t;
  t.type = type;
  t.ne[0] = ne0, t.ne[1] = ne1, t.ne[2] = ne2, t.ne[3] = ne3;
  set_contiguous_strides(t);
  t.data = const_cast<void*>(data);  // inputs are only read by ops
  TensorInfo i;
  i.origin = Origin::input;
  return add(t, i);
}

TensorId Graph::tensor(StorageType type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
  GraphTensor t;
  t.type = type;
  t.ne[0] = ne0, t.ne[1] = ne1, t.ne[2] = ne2, t.ne[3] = ne3;
  set_contiguous_strides(t);
  return add(t, TensorInfo{});
}

TensorId Graph::view(TensorId src, std::initializer_list<int64_t> ne, std::initializer_list<int64_t> nb, size_t offset) {
  GraphTensor t;
  t.type = tensors_[static_cast<size_t>(src)].type;
  int d = 0;
  for (int64_t v : ne) t.ne[d++] = v;
  set_contiguous_strides(t);
  d = 1;
  for (int64_t v : nb) t.nb[d++] = v;
  for (; d < 4; ++d) t.nb[d] = t.nb[d - 1] * t.ne[d - 1];
  TensorInfo i;
  i.origin = Origin::view;
  i.view_of = src;
  i.view_offset = offset;
  i.device = info_[static_cast<size_t>(src)].device;
  return add(t, i);
}

TensorId Graph::reshape(TensorId src, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
  const GraphTensor& s = tensors_[static_cast<size_t>(src)];
  if (s.elements() != ne0 * ne1 * ne2 * ne3) throw std::logic_error("graph: reshape changes the element count");
  GraphTensor t;
  t.type = s.type;
  t.ne[0] = ne0, t.ne[1] = ne1, t.ne[2] = ne2, t.ne[3] = ne3;
  set_contiguous_strides(t);
  return view(src, {ne0, ne1, ne2, ne3}, {t.nb[1], t.nb[2], t.nb[3]}, 0);
}

TensorId Graph::base(TensorId t) const {
  while (info_[static_cast<size_t>(t)].origin == Origin::view) t = info_[static_cast<size_t>(t)].view_of;
  return t;
}

TensorId Graph::op(OpKind kind, TensorId dst, std::initializer_list<TensorId> src, std::initializer_list<int32_t> i,
                   std::initializer_list<float> f) {
  GraphNode n;
  n.op = kind;
  n.dst = dst;
  int k = 0;
  for (TensorId s : src) n.src[k++] = s;
  k = 0;
  for (int32_t v : i) n.i[k++] = v;
  k = 0;
  for (float v : f) n.f[k++] = v;
  nodes_.push_back(n);
  return dst;
}

TensorId Graph::op(OpKind kind, TensorId dst, std::span<const TensorId> src) {
  GraphNode n;
  n.op = kind;
  n.dst = dst;
  for (size_t k = 0; k < src.size() && k < static_cast<size_t>(kMaxSources); ++k) n.src[k] = src[k];
  nodes_.push_back(n);
  return dst;
}

TensorId Graph::unary(OpKind kind, TensorId x, std::initializer_list<float> f) {
  const GraphTensor& s = tensors_[static_cast<size_t>(x)];
  const TensorId d = tensor(StorageType::F32, s.ne[0], s.ne[1], s.ne[2], s.ne[3]);
  return op(kind, d, {x}, {}, f);
}

TensorId Graph::binary(OpKind kind, TensorId a, TensorId b) {
  const GraphTensor& s = tensors_[static_cast<size_t>(a)];
  const TensorId d = tensor(StorageType::F32, s.ne[0], s.ne[1], s.ne[2], s.ne[3]);
  return op(kind, d, {a, b});
}

TensorId Graph::matmul(TensorId w, TensorId x) {
  const GraphTensor& wt = tensors_[static_cast<size_t>(w)];
  const GraphTensor& xt = tensors_[static_cast<size_t>(x)];
  const TensorId d = tensor(StorageType::F32, wt.ne[1], xt.ne[1], xt.ne[2], xt.ne[3]);
  return op(OpKind::matmul, d, {w, x});
}

TensorId Graph::matmul_id(TensorId w, TensorId x, TensorId ids) {
  const GraphTensor& wt = tensors_[static_cast<size_t>(w)];
  const GraphTensor& it = tensors_[static_cast<size_t>(ids)];
  const TensorId d = tensor(StorageType::F32, wt.ne[1], it.ne[0], it.ne[1]);
  return op(OpKind::matmul_id, d, {w, x, ids});
}

TensorId Graph::get_rows(TensorId table, TensorId ids) {
  const GraphTensor& t = tensors_[static_cast<size_t>(table)];
  const TensorId d = tensor(StorageType::F32, t.ne[0], tensors_[static_cast<size_t>(ids)].elements());
  return op(OpKind::get_rows, d, {table, ids});
}

TensorId Graph::copy(TensorId x, StorageType type) {
  const GraphTensor& s = tensors_[static_cast<size_t>(x)];
  const TensorId d = tensor(type, s.ne[0], s.ne[1], s.ne[2], s.ne[3]);
  return op(OpKind::copy, d, {x});
}

}  // namespace sy::graph
