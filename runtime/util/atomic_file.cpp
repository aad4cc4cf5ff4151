#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace sy::util {
namespace {

std::string why() { return std::strerror(errno); }

}  // namespace

Result<AtomicFile> AtomicFile::create(const std::filesystem::path& target, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_directory(target, ec))
    return error::invalid_argument(std::string(what) + ": " + target.string() + " is a folder; name a file to write");
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(folder, ec))
    return error::not_found(std::string(what) + ": the folder " + folder.string() + " does not exist; create it first");
  // mkstemp wants a writable template ending in XXXXXX.
  std::string tmpl = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    return error::io_error(std::string(what) + ": cannot create a file in " + folder.string() + " (" + why() + ")");
  AtomicFile f;
  f.fd_ = fd;
  f.target_ = target;
  f.temp_ = std::filesystem::path(name.data());
  f.what_ = what;
  // The name says what it is to someone who finds it after a crash.
  const std::filesystem::path partial = f.temp_.string() + ".partial";
  if (::rename(f.temp_.c_str(), partial.c_str()) == 0) f.temp_ = partial;
  (void)::fchmod(fd, 0644);  // mkstemp makes 0600; an output is as readable as any other file
  return f;
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), target_(std::move(o.target_)), temp_(std::move(o.temp_)),
      what_(std::move(o.what_)), written_(o.written_) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& o) noexcept {
  if (this != &o) {
    discard();
    fd_ = std::exchange(o.fd_, -1);
    target_ = std::move(o.target_);
    temp_ = std::move(o.temp_);
    what_ = std::move(o.what_);
    written_ = o.written_;
  }
  return *this;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
}

Status AtomicFile::write(std::span<const std::byte> bytes) {
  if (fd_ < 0) return error::internal(what_ + ": write after the file was closed");
  const std::byte* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = n < 0 ? why() : "nothing written";
      discard();
      return error::io_error(what_ + ": writing " + target_.string() + " failed (" + reason + "); " + target_.string() +
                             " was left as it was");
    }
    p += n;
    left -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  return {};
}

Status AtomicFile::commit() {
  if (fd_ < 0) return error::internal(what_ + ": commit after the file was closed");
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    const std::string reason = why();
    fd_ = -1;
    ::unlink(temp_.c_str());
    return error::io_error(what_ + ": finishing " + target_.string() + " failed (" + reason + ")");
  }
  fd_ = -1;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const std::string reason = why();
    ::unlink(temp_.c_str());
    return error::io_error(what_ + ": cannot move the finished file to " + target_.string() + " (" + reason + ")");
  }
  // The rename itself is durable once the folder is synced.
  const std::filesystem::path folder = target_.has_parent_path() ? target_.parent_path() : std::filesystem::path(".");
  if (const int dfd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

}  // namespace sy::util
