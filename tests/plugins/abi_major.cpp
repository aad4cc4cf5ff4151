// A plugin of the next ABI major, as a future SDK would build it: only the version (the
// descriptor's stable prefix, sdk/include/switchyard/plugin.hpp) is where today's
// descriptor has it. What follows is laid out otherwise, here as words that are no
// std::string and no vector: a runtime that reads anything past the version before refusing
// the plugin dereferences address 1 and crashes. Built without a manifest (today's tool
// could not read it either); the test writes the manifest a future SDK would.
#include <cstdint>

#include <boost/dll/alias.hpp>

#include "switchyard/plugin.hpp"

namespace {

struct NextDescriptor {
  uint32_t abi_major = sy::kAbiMajor + 1;
  uint32_t abi_minor = 0;
  uintptr_t words[16] = {1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3};
};

// The entry's type is the same in every ABI (what the registry calls); what it points to is not.
const sy::PluginDescriptor* describe() noexcept {
  static const NextDescriptor d;
  return reinterpret_cast<const sy::PluginDescriptor*>(&d);
}

}  // namespace

BOOST_DLL_ALIAS(describe, switchyard_plugin)
