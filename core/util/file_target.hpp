#pragma once
// The one check every writer that replaces a file by rename makes first (results files, the .npy
// writer, the app's PNG / SVG / CSV exports and screenshot, reproduce's figures): an existing
// target must be a regular file. A FIFO, a device node, a socket or a folder is refused before
// any work, because a rename would put a regular file in its place (as root: /dev/full gone).
// A symbolic link is followed: the file it points to is replaced and the link itself is kept
// (what Qt's QSaveFile does); a link to something that is not a regular file is refused too.
#include <cstddef>
#include <string>
#include <vector>

namespace pipelens {

// What `path` is when it exists (after following symbolic links) and is not a regular file:
// "a FIFO (named pipe)", "a character device", "a block device", "a socket", "a folder",
// "a symbolic link loop", "not a regular file"; empty when it is a regular file or absent.
std::string nonRegularFileKind(const std::string& path);

// The message for such a target: "cannot write PATH: it is KIND, not a regular file; ...".
std::string nonRegularFileMessage(const std::string& path, const std::string& kind);

// Throws IoError with nonRegularFileMessage when `path` exists and is not a regular file.
void checkFileTarget(const std::string& path);

// `path` with symbolic links in its last component followed (up to 40 links), so that a write
// replaces the file a link points to and keeps the link.
std::string resolveFileTarget(const std::string& path);

// Creates `path` (which must not exist: O_EXCL) and writes `size` bytes, then closes it. Throws
// IoError "cannot write PATH: REASON" with the system's reason (e.g. "No space left on device");
// a file it created is removed again on failure.
void writeNewFile(const std::string& path, const char* data, std::size_t size);

// A piece of a file's contents (written in order, without copying them into one buffer).
struct ByteRange {
    const char* data;
    std::size_t size;
};
void writeNewFile(const std::string& path, const std::vector<ByteRange>& parts);

// Writes `content` to `path` atomically: checkFileTarget, a temporary `path.tmp-PID` beside the
// (link-resolved) target, then rename. The temporary is removed on every failure. Throws IoError.
void replaceFileAtomically(const std::string& path, const char* data, std::size_t size);
void replaceFileAtomically(const std::string& path, const std::vector<ByteRange>& parts);

}  // namespace pipelens
