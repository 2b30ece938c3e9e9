#pragma once
// Every file below a folder, by relative path, with its bytes: what tests and benchmarks compare
// to say that two result folders are the same.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace pipelens::test {

inline std::map<std::string, std::string> snapshotFolder(const std::filesystem::path& dir) {
    std::map<std::string, std::string> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        files[std::filesystem::relative(e.path(), dir).string()] = text.str();
    }
    return files;
}

}  // namespace pipelens::test
