#pragma once
// The frames of a playback animation, drawn offscreen by the app's own chart classes: one frame
// per slot, the playback cursor just after it. A title line (experiment, method, S, "slot t / T")
// over the method's Gantt chart, which shows a window as wide as the chart's opening view
// (ganttStartUpSlots: max(24, 3·S·(cF + cB)/2) slots) that pages along with the cursor (cells stay
// readable and numbered); optionally the loss curves and the staleness heatmap below it, growing
// with the cursor as the window's own charts do.
//
// The charts are this renderer's own instances of GanttChart, LossChart and StalenessHeatmap,
// fed from the window's results: an export never moves the window's cursor or zoom, and the
// frames have the size asked for whatever the window's layout.
#include <QImage>
#include <QSize>
#include <QStringList>
#include <memory>
#include <utility>

#include "animation/animation_options.hpp"
#include "models/run_snapshot.hpp"
#include "schedule/timeline.hpp"

namespace pipelens::ui {

class GanttChart;
class LossChart;
class StalenessHeatmap;

class AnimationFrames {
  public:
    // `method`: the snapshot's method whose timeline is animated (it must have one).
    // `lossStyle` (optional): the loss chart whose x axis and log scales the frames copy.
    AnimationFrames(SnapshotPtr snapshot, int method, AnimationPanels panels, QSize size,
                    const LossChart* lossStyle = nullptr);
    ~AnimationFrames();
    AnimationFrames(const AnimationFrames&) = delete;
    AnimationFrames& operator=(const AnimationFrames&) = delete;

    int totalSlots() const;  // the method's run
    // The frame showing slot `slot` run: slots [0, slot] done, the cursor at slot + 1. Format
    // RGB32 at the size asked for; valid until the next call.
    const QImage& render(int slot);

    // The Gantt chart's visible slots [first, first + count) with the cursor at `cursor`: count
    // is the chart's opening view (ganttStartUpSlots of `params`), the window starts at 0 and,
    // once the cursor passes 90 % of it, jumps on by 80 % of its width (the cursor then a tenth
    // of the way in), as the window's chart follows playback.
    // The loss panel's legend names drawn whole inside the panel (an entry cut by the frame's
    // edge or the panel's is left out); empty without a loss panel.
    QStringList lossLegendShown() const;

    static std::pair<int, int> ganttWindow(int cursor, int totalSlots,
                                           const ScheduleParams& params);

  private:
    struct Impl;
    std::unique_ptr<Impl> d_;
};

// The first method (in config order) with a pipeline timeline; when `label` is given, the one
// with that label (as the Gantt chart's list shows it, any case) or else the first of that kind
// ("pd", "localsgd", ...). Throws ConfigError naming `field` and the labels allowed, or saying
// that no method has a timeline.
int animationMethod(const RunSnapshot& snapshot, const std::string& label,
                    const std::string& field);

}  // namespace pipelens::ui
