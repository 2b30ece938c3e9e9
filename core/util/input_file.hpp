#pragma once
// Reading an input file a person named (a config, a sweep file, a data file) without ever
// blocking and without reading forever: anything that is not a regular file (a FIFO, a device
// such as /dev/zero, a socket, a folder) is refused with a message naming the path and what it
// is, and every read is capped by the bytes actually read, not by the size stat reports.
#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>

namespace pipelens {

// At most `maxChars` bytes of `text` with control bytes, DEL, quotes, backslashes and bytes
// >= 0x80 written as \xNN (never echo raw bytes of a file or a path to a terminal); the one
// escaping function of the input readers' messages.
std::string escapeBytes(std::string_view text, std::size_t maxChars = SIZE_MAX);

// A path for a message: in single quotes, escaped with escapeBytes (cut after 1024 bytes).
std::string showPath(std::string_view path);

// The folder holding `path`, absolute when the working folder can be found (relative paths in
// the file are resolved against it); never throws, unlike std::filesystem::absolute.
std::string folderOf(const std::string& path);

// Builds and throws the caller's error type (ConfigError, DataError, IoError) from a message.
using ThrowError = void (*)(const std::string& message);

template <typename Error>
[[noreturn]] void throwAs(const std::string& message) {
    throw Error(message);
}

// An open regular file. `what` names it in messages ("config file", "CSV file").
class InputFile {
  public:
    // Throws (through `fail`) "<what> '<path>' does not exist", "... is a folder, not a file",
    // "... is a FIFO (named pipe), not a regular file", "cannot open <what> '<path>': <reason>".
    InputFile(const std::string& path, std::string what, ThrowError fail);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    // The size fstat gave when the file was opened (a hint only: the file may grow or shrink).
    std::uint64_t statSize() const { return statSize_; }
    const std::string& path() const { return path_; }
    const std::string& what() const { return what_; }

    // Up to `n` bytes; 0 at the end of the file. A read error throws.
    std::size_t read(char* buffer, std::size_t n);

    // The whole file; more than `maxBytes` bytes read throws "<what> '<path>' has more than
    // <maxBytes> bytes; <limitText>".
    std::string readAll(std::uint64_t maxBytes, const std::string& limitText);

    [[noreturn]] void fail(const std::string& message) const;

  private:
    int fd_ = -1;
    std::uint64_t statSize_ = 0;
    std::string path_;
    std::string what_;
    ThrowError fail_;
};

// readAll of an InputFile in one call.
std::string readInputFile(const std::string& path, const std::string& what, ThrowError fail,
                          std::uint64_t maxBytes, const std::string& limitText);

// A stream over an InputFile for line-by-line readers; reading past `maxBytes` throws (through
// the file's error type) from the stream buffer.
class InputFileStream : public std::istream {
  public:
    InputFileStream(const std::string& path, const std::string& what, ThrowError fail,
                    std::uint64_t maxBytes, std::string limitText);
    ~InputFileStream() override;
    InputFile& file() { return *file_; }

  private:
    class Buffer;
    std::unique_ptr<InputFile> file_;
    std::unique_ptr<Buffer> buffer_;
};

}  // namespace pipelens
