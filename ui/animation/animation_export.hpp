#pragma once
// Renders a finished run's playback (AnimationFrames) and encodes it (video::FrameEncoder) into
// a GIF, an MP4 or a folder of PNG frames: the one implementation behind `pipelens-cli animate`
// and the app's File → Export animation…. Frames are drawn on the calling (GUI) thread and
// encoded on a second thread, a few frames behind.
//
// Written atomically: a file goes to a temporary name beside it and is renamed into place; a
// folder is written as a temporary folder and swapped in (writeFolderAtomically), marked with
// kAnimationMarker. A failure or a cancel leaves an earlier file or folder as it was.
#include <atomic>
#include <functional>
#include <string>
#include <utility>

#include "animation/animation_options.hpp"
#include "models/run_snapshot.hpp"

namespace pipelens::ui {

class LossChart;
class MainWindow;

// The finished results to animate and how the window shows them.
struct AnimationSource {
    SnapshotPtr snapshot;
    const LossChart* lossStyle = nullptr;  // its x axis and log scales are copied
    int defaultMethod = -1;  // the method when none is named; -1: the first with a timeline
};
// The window's finished results, its loss chart's axes and its Gantt chart's method. Throws
// ConfigError when it has none (or a run is still computing).
AnimationSource animationSource(const MainWindow& window);

// The names messages give the fields (the CLI's options, or the dialog's labels).
struct AnimationFields {
    std::string out = "--out";
    std::string slotRange = "--slots";  // (Qt reserves the word "slots")
    std::string method = "--method";
};

struct AnimationWritten {
    std::string path;  // as written (a folder without its trailing '/')
    int frames = 0;
    int method = 0;  // in the snapshot
    std::pair<int, int> slotRange{0, 0};
    int totalSlots = 0;  // the method's run
    std::vector<std::string> warnings;
};

// `progress(done, total)` after each frame; `cancel` (optional) is checked between frames and
// stops with Interrupted. Throws ConfigError for a value that does not fit the run (the slot
// range, the method, the output path) before anything is written, IoError when writing fails.
AnimationWritten exportAnimation(const AnimationSource& source, const AnimationOptions& options,
                                 const AnimationFields& fields = {},
                                 const std::function<void(int done, int total)>& progress = {},
                                 const std::atomic<bool>* cancel = nullptr);

}  // namespace pipelens::ui
