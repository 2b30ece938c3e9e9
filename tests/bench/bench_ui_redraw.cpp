// Redraw speed of the hand-drawn charts on the largest run the workbench shows: PD with S = 128
// and N = 9873 (20,000 slots, 1,263,744 block updates). Each frame renders the widget (its real
// paintEvent) into a 1600 x 900 QImage under the offscreen platform; the target is >= 30 frames
// per second at full view and zoomed in. Also times the one-off setTimeline / setDelays, which
// build the aggregation structures (target: well under 100 ms for the Gantt).
//
// Usage: QT_QPA_PLATFORM=offscreen bench_ui_redraw [--frames N] [--reps N]
//   prints, per case, the median over reps of the mean frame time over N frames (wall clock and
//   the thread's CPU time, which is what to compare on a busy machine), the fps from each, and
//   the share of the image a frame inks. A frame must prove it drew: rendered over a sentinel
//   colour it must cover every pixel and ink (not white) at least a quarter of them, with
//   several colours; otherwise the benchmark says so and exits with status 1.
#include <QApplication>
#include <QImage>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "charts/gantt_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kStages = 128;
constexpr int kMicrobatches = 9873;  // 2N + 2(S - 1) = 20,000 slots
constexpr int kWidth = 1600;
constexpr int kHeight = 900;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Cost {
    double wall = 0;
    double cpu = 0;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Medians over `reps` of the mean seconds per call of `calls` calls of `work`.
Cost measure(int calls, int reps, const std::function<void()>& work) {
    std::vector<double> wall;
    std::vector<double> cpu;
    for (int r = 0; r < reps; ++r) {
        const auto start = Clock::now();
        const double cpuStart = threadCpuSeconds();
        for (int i = 0; i < calls; ++i) work();
        cpu.push_back((threadCpuSeconds() - cpuStart) / calls);
        wall.push_back(secondsSince(start) / calls);
    }
    return {median(wall), median(cpu)};
}

// What one more frame, rendered over a sentinel colour, left in the image.
struct Drawn {
    double unpainted = 0;  // share of pixels still the sentinel
    double inked = 0;      // share neither sentinel nor white
    int colours = 0;       // distinct colours among the inked pixels (counted up to 64)
    bool ok() const { return unpainted == 0 && inked >= 0.25 && colours >= 3; }
};

Drawn drawnFrame(QWidget& widget, QImage& image) {
    constexpr QRgb kSentinel = 0xffff00ff;
    image.fill(kSentinel);
    widget.render(&image);
    const QImage frame = image.convertToFormat(QImage::Format_RGB32);
    long long unpainted = 0;
    long long inked = 0;
    std::vector<QRgb> colours;
    for (int y = 0; y < frame.height(); ++y) {
        const auto* line = reinterpret_cast<const QRgb*>(frame.constScanLine(y));
        for (int x = 0; x < frame.width(); ++x) {
            const QRgb c = line[x] | 0xff000000u;
            if (c == kSentinel) {
                ++unpainted;
            } else if (c != 0xffffffffu) {
                ++inked;
                if (colours.size() < 64 &&
                    std::find(colours.begin(), colours.end(), c) == colours.end())
                    colours.push_back(c);
            }
        }
    }
    const double pixels = static_cast<double>(frame.width()) * frame.height();
    return {static_cast<double>(unpainted) / pixels, static_cast<double>(inked) / pixels,
            static_cast<int>(colours.size())};
}

bool allDrawn = true;

void printFrame(const char* name, Cost c, const Drawn& d) {
    std::printf("%-42s %8.2f ms %8.2f ms %7.1f fps %7.1f fps %5.0f %%  %s\n", name, c.wall * 1e3,
                c.cpu * 1e3, 1.0 / c.wall, 1.0 / c.cpu, 100.0 * d.inked,
                !d.ok()               ? "NOTHING DRAWN (unpainted pixels, or too little ink)"
                : 1.0 / c.cpu >= 30.0 ? "ok (>= 30)"
                                      : "BELOW 30 fps");
}

// Times `frames` renders of `widget` into `image` (median of `reps`), checks that a frame
// draws, and prints the line of one case.
void timeFrames(const char* name, QWidget& widget, QImage& image, int frames, int reps) {
    widget.render(&image);  // warm-up: fonts, glyph caches, the reused cell image
    const Cost cost = measure(frames, reps, [&] { widget.render(&image); });
    const Drawn drawn = drawnFrame(widget, image);
    allDrawn = allDrawn && drawn.ok();
    printFrame(name, cost, drawn);
}

void printSetup(const char* name, Cost c) {
    std::printf("%-42s %8.2f ms %8.2f ms\n", name, c.wall * 1e3, c.cpu * 1e3);
}

}  // namespace

int main(int argc, char** argv) {
    if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    QApplication app(argc, argv);
    int frames = 20;
    int reps = 5;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--frames") == 0)
            frames = std::max(1, std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--reps") == 0)
            reps = std::max(1, std::atoi(argv[++i]));
    }

    pipelens::ScheduleParams params;
    params.kind = pipelens::ScheduleKind::PipeDream;
    params.stages = kStages;
    params.microbatches = kMicrobatches;
    auto start = Clock::now();
    auto timeline = std::make_shared<const pipelens::Timeline>(pipelens::buildTimeline(params));
    const double buildTimelineSeconds = secondsSince(start);
    start = Clock::now();
    auto delays = std::make_shared<const pipelens::DelayTable>(*timeline);
    const double buildDelaysSeconds = secondsSince(start);
    std::printf(
        "PD S = %d, N = %d: %d slots, %lld block updates; %d x %d image, %d frames x %d "
        "reps\n",
        kStages, kMicrobatches, timeline->totalSlots, delays->updates(), kWidth, kHeight, frames,
        reps);
    std::printf("(engine) buildTimeline %.0f ms, DelayTable %.0f ms (wall)\n\n",
                buildTimelineSeconds * 1e3, buildDelaysSeconds * 1e3);
    std::printf("%-42s %11s %11s %11s %11s %7s\n", "case", "wall", "cpu", "fps(wall)", "fps(cpu)",
                "inked");

    QImage image(kWidth, kHeight, QImage::Format_ARGB32_Premultiplied);
    QImage hidpi(2 * kWidth, 2 * kHeight, QImage::Format_ARGB32_Premultiplied);
    hidpi.setDevicePixelRatio(2.0);

    pipelens::ui::GanttChart gantt;
    gantt.resize(kWidth, kHeight);
    printSetup("GanttChart::setTimeline", measure(1, reps, [&] {
                   gantt.setTimeline(nullptr);
                   gantt.setTimeline(timeline, delays);
               }));
    gantt.fitAll();
    timeFrames("Gantt full view (20,000 slots)", gantt, image, frames, reps);
    gantt.setCursorSlot(timeline->totalSlots / 2);
    timeFrames("Gantt full view, cursor at half", gantt, image, frames, reps);
    gantt.setCursorSlot(-1);
    timeFrames("Gantt full view, 2x device pixels", gantt, hidpi, frames, reps);
    gantt.setVisibleRange(10000, 10200);
    timeFrames("Gantt zoom: 200 slots", gantt, image, frames, reps);
    gantt.setVisibleRange(10000, 10040);
    timeFrames("Gantt zoom: 40 slots", gantt, image, frames, reps);

    pipelens::ui::StalenessHeatmap heatmap;
    heatmap.resize(kWidth, kHeight);
    printSetup("StalenessHeatmap::setDelays", measure(1, reps, [&] {
                   heatmap.setDelays(nullptr);
                   heatmap.setDelays(delays);
               }));
    heatmap.fitAll();
    timeFrames("Heatmap full view (1,263,744 updates)", heatmap, image, frames, reps);
    heatmap.setCursorUpdate(delays->updates() / 2);
    timeFrames("Heatmap full view, cursor at half", heatmap, image, frames, reps);
    heatmap.setCursorUpdate(-1);
    timeFrames("Heatmap full view, 2x device pixels", heatmap, hidpi, frames, reps);
    // The updates of 200 slots in steady state (about S/2 per slot), then 200 updates.
    const double first = 640000.0;
    heatmap.setVisibleRange(first, first + 200.0 * kStages / 2);
    timeFrames("Heatmap zoom: 12,800 updates (200 slots)", heatmap, image, frames, reps);
    heatmap.setVisibleRange(first, first + 200.0);
    timeFrames("Heatmap zoom: 200 updates", heatmap, image, frames, reps);
    heatmap.setVisibleRange(first, first + 60000.0);
    timeFrames("Heatmap zoom: 60,000 updates", heatmap, image, frames, reps);
    if (!allDrawn) {
        std::fprintf(stderr,
                     "bench_ui_redraw: a frame did not draw (see the cases marked above)\n");
        return 1;
    }
    return 0;
}
