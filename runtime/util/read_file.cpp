#include "util/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace sy::util {
namespace fs = std::filesystem;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// POSIX calls rather than streams: they report errno instead of throwing, and fstat on
// the opened descriptor sees the same file that is read (no check-then-open race).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

// Opens `path` for reading and checks it is not a directory; `st` receives its status.
Status open_input(const fs::path& path, const std::string& w, Fd& fd, struct stat& st) {
  if (path.empty()) return error::invalid_argument(w + " is empty; give a file path");
  fd = Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int e = errno;
    if (e == ENOENT) return error::not_found(w + " " + quoted(path) + " does not exist");
    return error::io_error("cannot read " + w + " " + quoted(path) + ": " + std::strerror(e));
  }
  if (::fstat(fd.get(), &st) != 0)
    return error::io_error("cannot read " + w + " " + quoted(path) + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return error::invalid_argument(w + " " + quoted(path) + " is a directory; give a file inside it");
  return Status::ok();
}

}  // namespace

Status check_input_file(const fs::path& path, std::string_view what) {
  Fd fd(-1);
  struct stat st {};
  return open_input(path, std::string(what), fd, st);
}

Result<std::string> read_file(const fs::path& path, std::string_view what, uint64_t max_bytes) {
  const std::string w(what);
  Fd fd(-1);
  struct stat st {};
  if (auto s = open_input(path, w, fd, st); !s) return s;
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes)
    return error::invalid_argument(w + " " + quoted(path) + " is " + std::to_string(st.st_size) +
                                   " bytes, more than the " + std::to_string(max_bytes) + " this input may have");
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return error::io_error("cannot read " + w + " " + quoted(path) + ": " + std::strerror(errno));
    if (n == 0) break;
    // Pipes and devices have no size up front, so the limit is also checked while reading.
    if (out.size() + static_cast<size_t>(n) > max_bytes)
      return error::invalid_argument(w + " " + quoted(path) + " holds more than the " + std::to_string(max_bytes) +
                                     " bytes this input may have");
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::optional<std::string>> read_optional_file(const fs::path& path, std::string_view what,
                                                      uint64_t max_bytes) {
  // read_file() reports not_found only for ENOENT at open, so nothing else is taken as absent.
  auto r = read_file(path, what, max_bytes);
  if (r) return std::optional<std::string>(std::move(*r));
  if (r.status().code() == StatusCode::not_found && !path.empty()) return std::optional<std::string>();
  return r.status();
}

Status check_output_path(const fs::path& path, std::string_view what) {
  const std::string w(what);
  if (path.empty()) return error::invalid_argument(w + " is empty; give a file path");
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return error::invalid_argument(w + " " + quoted(path) + " is a directory; give a file name (e.g. " +
                                   (path / "out").string() + ")");
  const fs::path parent = path.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return error::not_found(w + " " + quoted(path) + ": the directory " + quoted(parent) + " does not exist");
  return Status::ok();
}

}  // namespace sy::util
