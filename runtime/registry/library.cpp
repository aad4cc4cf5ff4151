#include "registry/library.hpp"

#include <dlfcn.h>

#include <cstring>

#include <boost/dll/shared_library.hpp>

namespace sy::registry {

struct Library::Impl {
  boost::dll::shared_library lib;
};

Library::~Library() = default;

Result<std::shared_ptr<Library>> Library::open(const std::filesystem::path& path) {
  std::shared_ptr<Library> self(new Library());
  self->impl_ = std::make_unique<Impl>();
  self->path_ = path;
  boost::dll::fs::error_code ec;
  dlerror();  // clear, so the message below belongs to this load
  self->impl_->lib.load(path, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = dlerror();
    return error::io_error(path.string() + " could not be loaded: " + (why ? std::string(why) : ec.message()));
  }
  if (!self->impl_->lib.has(kPluginSymbol))
    return error::invalid_argument(path.string() + " is not a Switchyard plugin: it does not export the '" +
                                   std::string(kPluginSymbol) + "' descriptor (SWITCHYARD_PLUGIN(...) in the SDK)");
  auto& entry = self->impl_->lib.get_alias<PluginEntryFn>(kPluginSymbol);
  self->descriptor_ = entry();
  if (!self->descriptor_)
    return error::invalid_argument(path.string() + " is a Switchyard plugin whose descriptor function returned null");
  // Another major may lay out everything after the version differently: read the version
  // alone, and nothing of the plugin (not even its type table) unless this runtime reads it.
  uint32_t version[2];
  std::memcpy(version, self->descriptor_, sizeof version);  // abi_major, abi_minor
  if (auto why = abi_version_incompatibility(version[0], version[1]))
    return error::invalid_argument(path.string() + " " + *why);
  if (self->impl_->lib.has(kStorageTypesSymbol)) {
    auto& types = self->impl_->lib.get_alias<StorageTypesFn>(kStorageTypesSymbol);
    self->types_ = types();
    if (!self->types_)
      return error::invalid_argument(path.string() + " exports a storage-type table function that returned null");
  }
  return self;
}

std::optional<std::string> abi_version_incompatibility(uint32_t major, uint32_t minor) {
  const std::string ours = std::to_string(kAbiMajor) + "." + std::to_string(kAbiMinor);
  const std::string theirs = std::to_string(major) + "." + std::to_string(minor);
  if (major != kAbiMajor)
    return "built for plugin ABI " + theirs + ", but this Switchyard provides ABI " + ours +
           "; rebuild the plugin against the installed SDK";
  if (minor > kAbiMinor) return "needs plugin ABI " + theirs + ", newer than this Switchyard's " + ours + "; update Switchyard";
  return std::nullopt;
}

void Library::attach(const HostServices& host) const {
  if (impl_->lib.has(kAttachSymbol)) impl_->lib.get_alias<AttachFn>(kAttachSymbol)(&host);
}

}  // namespace sy::registry
