// Never stale while S changes (issue 9): d = 512, the default preset's three methods (PD, RPD,
// LocalSGD), S edited through the real S field as the controls do. After the last edit it
// measures, for each target S:
//   schedule  the Gantt chart and the figure strip show the new S, repainted   (target 50 ms)
//   first     the loss chart draws a live curve of the new run                 (target 300 ms)
//   complete  the finished run is drawn (curves, heatmap, figures)             (when runs end)
//   stop      a superseded run (changed mid-run) has stopped                   (target 50 ms)
// It proves what it drew: every view's S is the target, the run finished, PD's run is the
// closed form 2N + 2(S − 1) slots long, and the finished curves hold the run's own data.
//
// Usage: QT_QPA_PLATFORM=offscreen bench_ui_stale [--reps N] [--grab DIR] [--family |
//        --schedule KEY]
//   --grab DIR saves the window (PNG) during and after a slow S = 128 run, for the docs.
//   --family runs the schedule family instead of the default preset's methods: PD, 1F1B with
//   flush, ZB-H1, interleaved (v = 2) and 2BW, on costs F = 2, B = 4, W = 2 (interleaved's chunk
//   ops 1, 2 and 1 slots), all five in one experiment.
//   --schedule KEY runs one of them alone (pd, 1f1b, zb-h1, interleaved or 2bw) on the same
//   costs: issue 31's "under 50 ms after an edit for every schedule at S <= 128".
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineSeries>
#include <QSpinBox>
#include <QStandardPaths>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "bench_timing.hpp"
#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controls/controls_panel.hpp"
#include "main_window.hpp"
#include "schedule/delays.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

[[noreturn]] void fail(const char* what, int stages) {
    std::fprintf(stderr, "bench_ui_stale: S = %d: %s\n", stages, what);
    std::exit(1);
}

// Runs the event loop until `done` or `limitMs`; false on time-out.
bool until(const QElapsedTimer& clock, const std::function<bool()>& done, int limitMs) {
    while (!done()) {
        if (clock.elapsed() > limitMs) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 2);
    }
    return true;
}

bool scheduleViewsShow(MainWindow& w, int S) {
    const auto tl = w.gantt()->timeline();
    const SnapshotPtr figures = w.figureStrip()->snapshot();
    // Interleaved's timeline has S·v model chunks on its S devices.
    const int chunks = tl && tl->params.kind == ScheduleKind::Interleaved
                           ? S * std::max(1, tl->params.virtualStages)
                           : S;
    return tl && tl->params.stages == chunks && figures && figures->experiment.config.stages == S &&
           w.figureStrip()->numbersTable()->text().contains(QStringLiteral("(S = %1)").arg(S));
}

bool liveCurveDrawn(MainWindow& w, int S) {
    LossChart* loss = w.lossChart();
    if (!loss->computing() || !loss->chart()->title().startsWith(QStringLiteral("S = %1:").arg(S)))
        return false;
    for (QLineSeries* s : loss->methodSeries()) {
        if (s->count() > 0) return true;
    }
    return false;
}

// The finished run of S is what every view draws, and it is the run the engine made.
void checkFinished(MainWindow& w, int S) {
    const SnapshotPtr s = w.controller()->latest();
    if (!s || s->experiment.config.stages != S) fail("the latest results are not of this S", S);
    if (w.lossChart()->computing() || w.lossChart()->snapshot() != s)
        fail("the loss chart does not draw the finished run", S);
    // (interleaved's delays are per model chunk: S·v blocks)
    const int blocks = s->result(0).timeline ? s->result(0).timeline->params.stages : S;
    if (w.heatmap()->computing() || !w.heatmap()->delays() ||
        w.heatmap()->delays()->stages() != blocks)
        fail("the heatmap does not draw this S", S);
    if (!scheduleViewsShow(w, S)) fail("the Gantt chart or figure strip is not of this S", S);
    for (size_t i = 0; i < s->runs().size(); ++i) {
        const RunResult& r = s->result(i);
        if (!r.finished && !r.divergence.diverged) fail("a method did not finish", S);
        // (with unit costs: --family runs F = 2, B = 4, whose PD run the simulator times)
        if (r.method == Method::PipeDream && pipeDreamFormulaApplies(r.timeline->params) &&
            r.timeline->totalSlots != pipeDreamSlotsFormula(S, static_cast<int>(r.microbatches)))
            fail("PD's run is not 2N + 2(S - 1) slots", S);
        // The drawn curve is the run's own f - f* (first and last slot).
        const auto& drawn = w.lossChart()->methodData(static_cast<int>(i));
        if (r.method == Method::PipeDream &&
            (drawn.size() != r.objectivePerSlot.size() ||
             drawn.back().y() != r.objectivePerSlot.back() - r.optimum))
            fail("the loss chart's PD curve is not the run's", S);
    }
}

}  // namespace

int main(int argc, char** argv) {
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("PipeLensBench");
    int reps = 3;
    QString grab;
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
        if (!std::strcmp(argv[i], "--grab")) grab = QString::fromLocal8Bit(argv[i + 1]);
    }
    bool family = false;
    const char* only = nullptr;  // --schedule KEY: that schedule alone
    for (int i = 1; i < argc; ++i) {
        family = family || !std::strcmp(argv[i], "--family");
        if (!std::strcmp(argv[i], "--schedule") && i + 1 < argc) only = argv[i + 1];
    }
    MainWindow w;
    w.resize(1500, 950);
    w.show();
    ExperimentConfig c = loadPreset("default").config;
    c.data.dim = 512;
    c.stages = 16;
    if (family || only) {
        c.costs = {2, 4, 0, 2};
        std::vector<MethodSpec> methods;
        std::vector<const char*> keys = {"pd", "1f1b", "zb-h1", "interleaved", "2bw"};
        if (only) keys = {only};
        for (const char* key : keys) {
            MethodSpec m;
            m.method = parseMethod(key);
            m.step.value = 0.25;
            methods.push_back(m);
        }
        c.methods = methods;
    }
    w.controller()->setConfig(c);
    if (!w.waitForResults(120000)) fail("no results for the start config", 16);
    QSpinBox* field = w.controls()->stagesField();
    const std::vector<int> targets = {128, 96, 64, 32, 16};
    std::vector<double> schedule, first, complete, stop;
    std::printf("S     schedule  first curve  complete  superseded stops   (ms)\n");
    for (int rep = 0; rep < reps; ++rep) {
        for (int S : targets) {
            QElapsedTimer clock;
            clock.start();
            field->setValue(S);  // the edit, as the S field does it
            if (!until(
                    clock, [&] { return scheduleViewsShow(w, S); }, 10000))
                fail("the schedule views never showed the new S", S);
            w.gantt()->repaint();
            w.figureStrip()->repaint();
            const double tSchedule = clock.nsecsElapsed() / 1e6;
            // (a short run may end before a live curve is drawn: its finished curve counts)
            auto finished = [&](int stages) {
                const SnapshotPtr latest = w.controller()->latest();
                return latest && latest->experiment.config.stages == stages &&
                       w.lossChart()->snapshot() == latest;
            };
            if (!until(
                    clock, [&] { return liveCurveDrawn(w, S) || finished(S); }, 60000))
                fail("no live curve of the new run", S);
            w.lossChart()->view()->repaint();
            const double tFirst = clock.nsecsElapsed() / 1e6;
            // A picture for the docs (outside the measured times; layout settles first).
            auto save = [&](const char* name) {
                QElapsedTimer settle;
                settle.start();
                until(
                    settle, [] { return false; }, 150);
                w.grab().save(grab + name);
            };
            if (!grab.isEmpty() && rep == 0 && S == 128) save("/during-s128.png");
            if (!w.waitForResults(600000)) fail("the run did not finish", S);
            w.lossChart()->view()->repaint();
            const double tComplete = clock.nsecsElapsed() / 1e6;
            checkFinished(w, S);
            if (!grab.isEmpty() && rep == 0 && S == 128) save("/after-s128.png");
            // Supersede a run mid-way: change S while the next run computes, without starting
            // a newer one (long debounce), and time until the old run's worker has stopped.
            const int other = S == 16 ? 128 : S / 2;
            field->setValue(other);
            // A run of one method at small S may end before its first live curve is drawn:
            // then there is nothing to supersede, and no stop time is recorded for this S.
            auto finishedAt = [&](int stages) {
                return finished(stages) && w.controller()->workersInFlight() == 0;
            };
            if (!until(
                    clock, [&] { return liveCurveDrawn(w, other) || finishedAt(other); }, 60000))
                fail("the run to supersede never started", other);
            double tStop = -1.0;
            if (!finishedAt(other)) {
                const int debounce = w.controller()->debounceMs();
                w.controller()->setDebounceMs(3600000);
                QElapsedTimer stopClock;
                stopClock.start();
                field->setValue(other + 1);
                if (!until(
                        stopClock, [&] { return w.controller()->workersInFlight() == 0; }, 60000))
                    fail("the superseded run did not stop", other);
                tStop = stopClock.nsecsElapsed() / 1e6;
                w.controller()->setDebounceMs(debounce);
            }
            // Back to S (never to the next target: an edit to the S already shown starts no run).
            field->setValue(S);
            if (!w.waitForResults(600000)) fail("no results after the superseded run", S);
            std::printf(
                "%-4d %9.1f %12.1f %9.1f %18s\n", S, tSchedule, tFirst, tComplete,
                tStop < 0 ? "(ended first)" : QByteArray::number(tStop, 'f', 1).constData());
            std::fflush(stdout);
            schedule.push_back(tSchedule);
            first.push_back(tFirst);
            complete.push_back(tComplete);
            if (tStop >= 0) stop.push_back(tStop);
        }
    }
    auto maxOf = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
    if (stop.empty()) stop.push_back(0.0);  // every run ended before it could be superseded
    std::printf(
        "median (max): schedule %.1f (%.1f) target 50: %s; first curve %.1f (%.1f) "
        "target 300: %s; complete %.1f (%.1f); superseded stops %.1f (%.1f) target 50: %s\n",
        bench::median(schedule), maxOf(schedule), maxOf(schedule) < 50 ? "met" : "NOT met",
        bench::median(first), maxOf(first), maxOf(first) < 300 ? "met" : "NOT met",
        bench::median(complete), maxOf(complete), bench::median(stop), maxOf(stop),
        maxOf(stop) < 50 ? "met" : "NOT met");
    return 0;
}
