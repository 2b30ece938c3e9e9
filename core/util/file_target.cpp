#include "util/file_target.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "errors.hpp"

namespace pipelens {
namespace fs = std::filesystem;

std::string nonRegularFileKind(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ELOOP) return "a symbolic link loop";
        return {};  // absent (or unreadable: the write itself then says why)
    }
    if (S_ISREG(st.st_mode)) return {};
    if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(st.st_mode)) return "a character device";
    if (S_ISBLK(st.st_mode)) return "a block device";
    if (S_ISSOCK(st.st_mode)) return "a socket";
    if (S_ISDIR(st.st_mode)) return "a folder";
    return "not a regular file";
}

std::string nonRegularFileMessage(const std::string& path, const std::string& kind) {
    return "cannot write " + path + ": it is " + kind +
           ", not a regular file; PipeLens only replaces regular files: choose another file name";
}

void checkFileTarget(const std::string& path) {
    const std::string kind = nonRegularFileKind(path);
    if (!kind.empty()) throw IoError(nonRegularFileMessage(path, kind));
}

std::string resolveFileTarget(const std::string& path) {
    fs::path p(path);
    for (int i = 0; i < 40; ++i) {
        std::error_code ec;
        if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
        const fs::path link = fs::read_symlink(p, ec);
        if (ec) break;
        p = link.is_absolute() ? link : p.parent_path() / link;
    }
    return p.string();
}

void writeNewFile(const std::string& path, const char* data, std::size_t size) {
    writeNewFile(path, std::vector<ByteRange>{{data, size}});
}

namespace {

// Creates `path` (O_EXCL) and writes `parts`; 0, or the errno of the first failure (the file
// it created is removed again then).
int writeNew(const std::string& path, const std::vector<ByteRange>& parts) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return errno;
    int err = 0;
    for (ByteRange part : parts) {
        while (err == 0 && part.size > 0) {
            const ssize_t n = ::write(fd, part.data, part.size);
            if (n < 0) {
                if (errno != EINTR) err = errno;
                continue;
            }
            part.data += n;
            part.size -= static_cast<std::size_t>(n);
        }
    }
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) ::unlink(path.c_str());
    return err;
}

}  // namespace

void writeNewFile(const std::string& path, const std::vector<ByteRange>& parts) {
    if (const int err = writeNew(path, parts); err != 0) {
        throw IoError("cannot write " + path + ": " + std::strerror(err));
    }
}

void replaceFileAtomically(const std::string& path, const char* data, std::size_t size) {
    replaceFileAtomically(path, std::vector<ByteRange>{{data, size}});
}

void replaceFileAtomically(const std::string& path, const std::vector<ByteRange>& parts) {
    checkFileTarget(path);
    const std::string target = resolveFileTarget(path);
    const std::string tmp = target + ".tmp-" + std::to_string(::getpid());
    // Named by the file asked for; the temporary is gone whatever failed.
    if (const int err = writeNew(tmp, parts); err != 0) {
        throw IoError("cannot write " + path + ": " +
                      (err == EEXIST ? "its temporary name " + tmp +
                                           " is taken by a file PipeLens did not write"
                                     : std::string(std::strerror(err))));
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw IoError("cannot write " + path + ": " + std::strerror(err));
    }
}

}  // namespace pipelens
