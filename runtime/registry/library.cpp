#include "registry/library.hpp"

#include <dlfcn.h>

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
  if (self->impl_->lib.has(kStorageTypesSymbol)) {
    auto& types = self->impl_->lib.get_alias<StorageTypesFn>(kStorageTypesSymbol);
    self->types_ = types();
    if (!self->types_)
      return error::invalid_argument(path.string() + " exports a storage-type table function that returned null");
  }
  return self;
}

void Library::attach(const HostServices& host) const {
  if (impl_->lib.has(kAttachSymbol)) impl_->lib.get_alias<AttachFn>(kAttachSymbol)(&host);
}

}  // namespace sy::registry
