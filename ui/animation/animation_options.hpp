#pragma once
// What an animation export is asked for, shared by `pipelens-cli animate` and the app's File →
// Export animation… dialog, and the checks of each value. Every check throws ConfigError naming
// the field (an option such as "--fps", or a dialog field), the value and what is allowed.
#include <optional>
#include <string>
#include <utility>

#include "animation/video_encoder.hpp"

namespace pipelens::ui {

// What a frame holds beside the title line: the Gantt chart alone, the loss curves below it, or
// the loss curves and the staleness heatmap side by side below it.
enum class AnimationPanels { Gantt, GanttLoss, All };

struct AnimationOptions {
    std::string out;  // FILE.gif, FILE.mp4 or DIR/ (a folder of frame_00000.png ...)
    video::VideoFormat format = video::VideoFormat::Gif;
    // Slots [first, end) of the method's run, one frame each; none: the whole run.
    std::optional<std::pair<int, int>> slotRange;
    int fps = 10;
    int width = 960;
    int height = 540;
    AnimationPanels panels = AnimationPanels::Gantt;
    // The method's label (as the Gantt chart's method list shows it); empty: the default.
    std::string method;
};

inline constexpr int kAnimationMinFps = 1;
inline constexpr int kAnimationMaxFps = 60;
inline constexpr int kAnimationMinWidth = 320;
inline constexpr int kAnimationMaxWidth = 3840;
inline constexpr int kAnimationMinHeight = 180;
inline constexpr int kAnimationMaxHeight = 2160;
// The name of the marker file in a folder of frames this export wrote: only such a folder (or
// an empty one) is replaced.
inline constexpr const char* kAnimationMarker = ".pipelens-animation";

// The format by the output's name: .gif, .mp4 (any case), or a path ending in '/'.
video::VideoFormat animationFormat(const std::string& out, const std::string& field);
// "A:B" with 0 <= A < B (the run's length is checked later, by checkSlotRange).
std::pair<int, int> parseSlotRange(const std::string& text, const std::string& field);
// Within the method's run of `totalSlots` slots: B <= totalSlots.
void checkSlotRange(const std::pair<int, int>& slotRange, int totalSlots, const std::string& text,
                    const std::string& field);
int parseFps(const std::string& text, const std::string& field);
// "WIDTHxHEIGHT" within the limits above; even both for MP4 (H.264's 4:2:0 chroma).
std::pair<int, int> parseFrameSize(const std::string& text, video::VideoFormat format,
                                   const std::string& field);
AnimationPanels parsePanels(const std::string& text, const std::string& field);
const char* panelsName(AnimationPanels panels);
const char* formatName(video::VideoFormat format);  // "GIF", "MP4", "PNG frames"

// Checks the output path before any work (the CLI: before the run): a file's folder exists and
// the file is not a folder, FIFO or device; a frames folder is new, empty or written by an
// earlier export (it holds kAnimationMarker). Returns the path to write (a folder without its
// trailing '/').
std::string prepareAnimationTarget(const AnimationOptions& options, const std::string& field);

}  // namespace pipelens::ui
