#include "util/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace pipelens {
namespace {

// What a non-regular file is, for "... is <kind>, not a regular file".
std::string kindOf(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a plain file";
}

std::string notRegular(const std::string& what, const std::string& path, mode_t mode) {
    if (S_ISDIR(mode)) return what + " " + showPath(path) + " is a folder, not a file";
    return what + " " + showPath(path) + " is " + kindOf(mode) + ", not a regular file";
}

}  // namespace

std::string escapeBytes(std::string_view text, std::size_t maxChars) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    const std::size_t shown = std::min(text.size(), maxChars);
    out.reserve(shown);
    for (std::size_t i = 0; i < shown; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string showPath(std::string_view path) {
    constexpr std::size_t kMax = 1024;
    // Appended, not "'" + escapeBytes(...): GCC 12's false -Wrestrict at -O3 (CI builds -Werror).
    std::string out = "'";
    out += escapeBytes(path, kMax);
    out += path.size() > kMax ? "...'" : "'";
    return out;
}

std::string folderOf(const std::string& path) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(path, ec);
    if (ec) p = path;
    return p.parent_path().string();
}

InputFile::InputFile(const std::string& path, std::string what, ThrowError fail)
    : path_(path), what_(std::move(what)), fail_(fail) {
    // stat first: opening a FIFO for reading blocks until a writer comes.
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        const int err = errno;
        if (err == ENOENT) fail_(what_ + " " + showPath(path) + " does not exist");
        fail_("cannot open " + what_ + " " + showPath(path) + ": " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) fail_(notRegular(what_, path, st.st_mode));
    // O_NONBLOCK: if the path was swapped for a FIFO after the stat, open still returns.
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
        const int err = errno;
        fail_("cannot open " + what_ + " " + showPath(path) + ": " + std::strerror(err));
    }
    // The descriptor is what is read: check it, not the path.
    struct stat opened {};
    if (::fstat(fd_, &opened) != 0) {
        const int err = errno;
        ::close(fd_);
        fd_ = -1;
        fail_("cannot open " + what_ + " " + showPath(path) + ": " + std::strerror(err));
    }
    if (!S_ISREG(opened.st_mode)) {
        ::close(fd_);
        fd_ = -1;
        fail_(notRegular(what_, path, opened.st_mode));
    }
    st = opened;
    statSize_ = static_cast<std::uint64_t>(st.st_size);
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

void InputFile::fail(const std::string& message) const {
    fail_(message);
    std::abort();  // fail_ always throws
}

InputFile::~InputFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::size_t InputFile::read(char* buffer, std::size_t n) {
    for (;;) {
        const ssize_t got = ::read(fd_, buffer, n);
        if (got >= 0) return static_cast<std::size_t>(got);
        if (errno == EINTR) continue;
        const int err = errno;
        fail_("cannot read " + what_ + " " + showPath(path_) + ": " + std::strerror(err));
    }
}

std::string InputFile::readAll(std::uint64_t maxBytes, const std::string& limitText) {
    std::string text;
    // The stat size is only a hint for the first allocation: the count of bytes read decides.
    text.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(statSize_, maxBytes)));
    char chunk[65536];
    for (;;) {
        const std::size_t got = read(chunk, sizeof chunk);
        if (got == 0) return text;
        if (text.size() + got > maxBytes) {
            fail_(what_ + " " + showPath(path_) + " has more than " + std::to_string(maxBytes) +
                  " bytes; " + limitText);
        }
        text.append(chunk, got);
    }
}

std::string readInputFile(const std::string& path, const std::string& what, ThrowError fail,
                          std::uint64_t maxBytes, const std::string& limitText) {
    InputFile file(path, what, fail);
    return file.readAll(maxBytes, limitText);
}

class InputFileStream::Buffer : public std::streambuf {
  public:
    Buffer(InputFile& file, std::uint64_t maxBytes, std::string limitText)
        : file_(file), maxBytes_(maxBytes), limitText_(std::move(limitText)), data_(65536) {}

  protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        const std::size_t got = file_.read(data_.data(), data_.size());
        if (got == 0) return traits_type::eof();
        total_ += got;
        if (total_ > maxBytes_) {
            file_.fail(file_.what() + " " + showPath(file_.path()) + " has more than " +
                       std::to_string(maxBytes_) + " bytes; " + limitText_);
        }
        setg(data_.data(), data_.data(), data_.data() + got);
        return traits_type::to_int_type(*gptr());
    }

  private:
    InputFile& file_;
    std::uint64_t maxBytes_;
    std::string limitText_;
    std::vector<char> data_;
    std::uint64_t total_ = 0;
};

InputFileStream::InputFileStream(const std::string& path, const std::string& what, ThrowError fail,
                                 std::uint64_t maxBytes, std::string limitText)
    : std::istream(nullptr), file_(std::make_unique<InputFile>(path, what, fail)) {
    buffer_ = std::make_unique<Buffer>(*file_, maxBytes, std::move(limitText));
    rdbuf(buffer_.get());
}

InputFileStream::~InputFileStream() {
    rdbuf(nullptr);
}

}  // namespace pipelens
