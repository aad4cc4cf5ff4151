#include "types/type_registry.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <mutex>

#include "types/builtin_types.hpp"
#include "types/table.hpp"

namespace sy::types {
namespace {

std::string upper(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

bool valid_name(std::string_view n) {
  return !n.empty() && n.size() <= 64 &&
         std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}


}  // namespace

TypeRegistry::Declared TypeRegistry::declared(const StorageTypeDesc& d) {
  return {d.name ? d.name : "", d.repack_to ? d.repack_to : "", d.block_size, d.block_bytes, d.group_size, d.flags,
          d.quantize_row != nullptr};
}

bool TypeRegistry::same_types(const std::vector<Declared>& had, const StorageTypeTable& table) {
  if (had.size() != table.count) return false;
  for (uint32_t i = 0; i < table.count; ++i)
    if (!(had[i] == declared(table_entry(table, i)))) return false;
  return true;
}

TypeRegistry::TypeRegistry() {
  for (const auto& b : builtin_types()) {
    Entry& e = emplace(static_cast<uint32_t>(b.id), std::string(b.provider), b.desc, b.in_gguf, true);
    fast_[static_cast<uint32_t>(b.id)] = &e;
  }
}

TypeRegistry& TypeRegistry::process() {
  // Never destroyed: plugin code may look types up from static destructors at exit.
  static auto* r = new TypeRegistry();
  return *r;
}

Entry& TypeRegistry::emplace(uint32_t id, const std::string& provider, const StorageTypeDesc& d, bool in_gguf, bool builtin) {
  Entry& e = entries_.emplace_back();
  e.bare = d.name;
  e.provider = provider;
  e.builtin = builtin;
  e.name = builtin ? e.bare : provider + "." + e.bare;
  e.desc = d;
  e.desc.struct_size = sizeof(StorageTypeDesc);
  e.desc.name = e.name.c_str();
  e.info.type = static_cast<StorageType>(id);
  e.info.name = e.name;
  e.info.block_size = d.block_size;
  e.info.block_bytes = d.block_bytes;
  e.info.quantized = (d.flags & kStorageQuantized) != 0;
  e.info.in_gguf = in_gguf;
  e.info.group_size = d.group_size;
  ids_.emplace(id, &e);
  names_.emplace(upper(e.name), &e);
  if (!builtin) names_.emplace(upper(e.bare), &e);
  return e;
}

Status TypeRegistry::add(const std::string& provider, const StorageTypeTable& table, std::shared_ptr<const void> keep_alive) {
  const std::string who = "plugin '" + provider + "'";
  if (auto problem = table_problem(table)) return error::invalid_argument(who + " " + *problem);
  std::unique_lock lock(mu_);
  // The same plugin again (another registry, or a copy of the library elsewhere on the
  // search path) keeps the types registered first, when it declares the same ones.
  if (auto it = tables_.find(provider); it != tables_.end()) {
    if (same_types(it->second, table)) return Status::ok();
    return error::invalid_argument(who + " registered other storage types already, from another library; two "
                                   "plugins must not share a name, and one plugin's copies must declare the same types");
  }
  // Check every descriptor before adding any.
  std::vector<StorageTypeDesc> descs;
  std::vector<std::string> seen;
  for (uint32_t i = 0; i < table.count; ++i) {
    const auto& given = table_entry(table, i);
    StorageTypeDesc d;
    std::memcpy(&d, &given, std::min<size_t>(given.struct_size, sizeof(StorageTypeDesc)));
    const std::string name = d.name ? d.name : "";
    const std::string at = who + ", storage type '" + name + "'";
    if (!valid_name(name))
      return error::invalid_argument(who + ": storage type " + std::to_string(i) +
                                     " needs a name of 1-64 letters, digits or '_'");
    if (std::find(seen.begin(), seen.end(), upper(name)) != seen.end())
      return error::invalid_argument(at + " is declared twice");
    for (uint32_t id = 0; id < kFastIds; ++id)
      if (fast_[id] && upper(fast_[id]->name) == upper(name))
        return error::invalid_argument(at + " takes the name of a built-in type; choose another name");
    // The generic kernel and the loader size buffers by blocks: bounded, so a wrong table
    // cannot ask for gigabytes.
    if (d.block_size == 0 || d.block_bytes == 0 || d.block_size > 65536 || d.block_bytes > (1u << 20))
      return error::invalid_argument(at + " needs a block_size of 1-65536 elements and block_bytes of 1-1048576");
    if (d.group_size != 0 && d.block_size % d.group_size != 0)
      return error::invalid_argument(at + ": its block of " + std::to_string(d.block_size) +
                                     " elements is not a whole number of groups of " + std::to_string(d.group_size));
    if (!d.dequantize_row) return error::invalid_argument(at + " has no dequantize_row; every type needs one");
    if ((d.repack_to == nullptr) != (d.repack == nullptr))
      return error::invalid_argument(at + " names a repack target without a repack function, or the reverse");
    if (d.repack_to) {
      // A target declared earlier in the same table (named bare) is added with it, below.
      const std::string target = upper(d.repack_to);
      const bool own = std::any_of(seen.begin(), seen.end(), [&](const std::string& s) { return s == target; });
      if (!own && !find_name(target, nullptr))
        return error::not_found(at + " repacks into '" + std::string(d.repack_to) +
                                "', which is not a registered type (declare it first, or name a built-in one)");
    }
    seen.push_back(upper(name));
    descs.push_back(d);
  }
  for (const auto& d : descs) {
    Entry& e = emplace(next_id_++, provider, d, false, false);
    if (d.repack_to) {
      const std::string target = d.repack_to;
      auto it = names_.find(upper(provider + "." + target));
      if (it == names_.end()) it = names_.find(upper(target));
      e.repack_to = it->second->name;
      e.repack_type = it->second->info.type;
      e.desc.repack_to = e.repack_to.c_str();
    }
  }
  std::vector<Declared> kept;
  for (const auto& d : descs) kept.push_back(declared(d));
  tables_.emplace(provider, std::move(kept));
  if (keep_alive) keep_.push_back(std::move(keep_alive));
  return Status::ok();
}

const Entry* TypeRegistry::by_id(uint32_t id) const noexcept {
  if (id < kFastIds) return fast_[id];
  std::shared_lock lock(mu_);
  const auto it = ids_.find(id);
  return it == ids_.end() ? nullptr : it->second;
}

const Entry* TypeRegistry::by_name(std::string_view name, std::vector<const Entry*>* ambiguous) const {
  std::shared_lock lock(mu_);
  return find_name(name, ambiguous);
}

const Entry* TypeRegistry::find_name(std::string_view name, std::vector<const Entry*>* ambiguous) const {
  const std::string key = upper(name);
  const auto [lo, hi] = names_.equal_range(key);
  if (lo == hi) return nullptr;
  if (std::next(lo) == hi) return lo->second;
  // A canonical name is unique; several hits are bare names of different plugins' types.
  for (auto it = lo; it != hi; ++it)
    if (upper(it->second->name) == key) return it->second;
  if (ambiguous)
    for (auto it = lo; it != hi; ++it) ambiguous->push_back(it->second);
  return nullptr;
}

size_t TypeRegistry::size() const noexcept {
  std::shared_lock lock(mu_);
  return entries_.size();
}

const Entry* TypeRegistry::at(size_t i) const noexcept {
  std::shared_lock lock(mu_);
  return i < entries_.size() ? &entries_[i] : nullptr;
}

}  // namespace sy::types
