#include "animation/animation_options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "cmdline/args.hpp"
#include "errors.hpp"
#include "experiment/output/results.hpp"
#include "util/file_target.hpp"

namespace pipelens::ui {
namespace {

// FIELD = "VALUE" is not allowed: WHAT
[[noreturn]] void refuse(const std::string& field, const std::string& value,
                         const std::string& allowed) {
    std::string message = field;
    message += " = \"";
    message += cmdline::shownValue(value);
    message += "\" is not allowed: ";
    message += allowed;
    throw ConfigError(message);
}

bool endsWithNoCase(const std::string& text, const std::string& suffix) {
    if (text.size() < suffix.size()) return false;
    return std::equal(suffix.begin(), suffix.end(), text.end() - static_cast<long>(suffix.size()),
                      [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                      });
}

// A whole decimal integer (digits only, no sign, no spaces), or nullopt.
std::optional<long long> wholeNumber(std::string_view text) {
    if (text.empty() || text.size() > 12) return std::nullopt;
    long long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.front() == '-' ||
        text.front() == '+') {
        return std::nullopt;
    }
    return value;
}

std::string range(int lo, int hi) {
    std::string s = std::to_string(lo);
    s += " to ";
    s += std::to_string(hi);
    return s;
}

}  // namespace

video::VideoFormat animationFormat(const std::string& out, const std::string& field) {
    if (!out.empty() && out.back() == '/') return video::VideoFormat::PngFolder;
    if (endsWithNoCase(out, ".gif") && out.size() > 4) return video::VideoFormat::Gif;
    if (endsWithNoCase(out, ".mp4") && out.size() > 4) return video::VideoFormat::Mp4;
    refuse(field, out, ".gif, .mp4, or a folder path ending in /");
}

std::pair<int, int> parseSlotRange(const std::string& text, const std::string& field) {
    const std::string allowed =
        "A:B, whole numbers with 0 <= A < B (the slots [A, B) of the run, one frame each)";
    const auto colon = text.find(':');
    if (colon == std::string::npos) refuse(field, text, allowed);
    const auto a = wholeNumber(std::string_view(text).substr(0, colon));
    const auto b = wholeNumber(std::string_view(text).substr(colon + 1));
    if (!a || !b || *a >= *b || *b > 1'000'000'000) refuse(field, text, allowed);
    return {static_cast<int>(*a), static_cast<int>(*b)};
}

void checkSlotRange(const std::pair<int, int>& slots, int totalSlots, const std::string& text,
                    const std::string& field) {
    if (slots.first >= 0 && slots.first < slots.second && slots.second <= totalSlots) return;
    std::string allowed = "A:B with 0 <= A < B <= ";
    allowed += std::to_string(totalSlots);
    allowed += " (the method's run has ";
    allowed += std::to_string(totalSlots);
    allowed += " slots)";
    refuse(field, text, allowed);
}

int parseFps(const std::string& text, const std::string& field) {
    const auto v = wholeNumber(text);
    if (!v || *v < kAnimationMinFps || *v > kAnimationMaxFps) {
        std::string allowed = "frames per second, a whole number from ";
        allowed += range(kAnimationMinFps, kAnimationMaxFps);
        refuse(field, text, allowed);
    }
    return static_cast<int>(*v);
}

std::pair<int, int> parseFrameSize(const std::string& text, video::VideoFormat format,
                                   const std::string& field) {
    std::string allowed = "WIDTHxHEIGHT in pixels, width ";
    allowed += range(kAnimationMinWidth, kAnimationMaxWidth);
    allowed += ", height ";
    allowed += range(kAnimationMinHeight, kAnimationMaxHeight);
    const auto x = text.find('x');
    if (x == std::string::npos) refuse(field, text, allowed);
    const auto w = wholeNumber(std::string_view(text).substr(0, x));
    const auto h = wholeNumber(std::string_view(text).substr(x + 1));
    if (!w || !h || *w < kAnimationMinWidth || *w > kAnimationMaxWidth ||
        *h < kAnimationMinHeight || *h > kAnimationMaxHeight) {
        refuse(field, text, allowed);
    }
    if (format == video::VideoFormat::Mp4 && (*w % 2 != 0 || *h % 2 != 0)) {
        refuse(field, text, allowed + ", both even for .mp4 (H.264 halves the colour resolution)");
    }
    return {static_cast<int>(*w), static_cast<int>(*h)};
}

AnimationPanels parsePanels(const std::string& text, const std::string& field) {
    if (text == "gantt") return AnimationPanels::Gantt;
    if (text == "gantt+loss") return AnimationPanels::GanttLoss;
    if (text == "all") return AnimationPanels::All;
    refuse(field, text, "one of gantt, gantt+loss, all");
}

const char* panelsName(AnimationPanels panels) {
    switch (panels) {
        case AnimationPanels::Gantt:
            return "gantt";
        case AnimationPanels::GanttLoss:
            return "gantt+loss";
        case AnimationPanels::All:
            return "all";
    }
    return "gantt";
}

const char* formatName(video::VideoFormat format) {
    switch (format) {
        case video::VideoFormat::Gif:
            return "GIF";
        case video::VideoFormat::Mp4:
            return "MP4";
        case video::VideoFormat::PngFolder:
            return "PNG frames";
    }
    return "GIF";
}

std::string prepareAnimationTarget(const AnimationOptions& options, const std::string& field) {
    namespace fs = std::filesystem;
    const std::string& out = options.out;
    if (options.format != video::VideoFormat::PngFolder) {
        checkFileTarget(out);  // not a folder, FIFO or device
        fs::path parent = fs::path(out).parent_path();
        if (parent.empty()) parent = ".";
        std::error_code ec;
        if (!fs::is_directory(parent, ec)) {
            std::string allowed = "a file in an existing folder (";
            allowed += parent.string();
            allowed += " is not one)";
            refuse(field, out, allowed);
        }
        return out;
    }
    std::string folder = out;
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    std::error_code ec;
    if (fs::is_directory(folder, ec) && !fs::is_empty(folder, ec) &&
        !fs::exists(fs::path(folder) / kAnimationMarker, ec)) {
        refuse(field, out,
               std::string("a new or empty folder, or one an animation export wrote (this one "
                           "holds other files and no ") +
                   kAnimationMarker + ")");
    }
    return prepareResultsFolder(folder, field);
}

}  // namespace pipelens::ui
