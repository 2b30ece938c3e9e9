// From a parameter change to updated curves, on the default preset (logistic regression, S = 8,
// PD vs RPD vs LocalSGD, 5 epochs): the time from the edit reaching the ExperimentController
// (as a control does it) until the window has handled the new results (loss curves, Gantt,
// heatmap and figure strip replaced) and repainted the loss chart. It includes the controller's
// debounce (30 ms by default), the run on worker threads and the GUI update. Target: < 150 ms.
//
// Usage: QT_QPA_PLATFORM=offscreen bench_ui_update [--reps N] [--debounce MS]
//   Two cases: the step size of one method (only it reruns) and S (every method reruns); each
//   rep alternates between two values, so every rep is a real rerun.
#include <QApplication>
#include <QChartView>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "charts/loss_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "main_window.hpp"

using namespace pipelens;
using namespace pipelens::ui;

int main(int argc, char** argv) {
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("PipeLensBench");
    int reps = 15;
    int debounce = -1;
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps")) reps = std::max(1, std::atoi(argv[i + 1]));
        if (!std::strcmp(argv[i], "--debounce")) debounce = std::atoi(argv[i + 1]);
    }
    MainWindow window;
    window.resize(1500, 950);
    window.show();
    if (!window.waitForResults(60000)) {
        std::fprintf(stderr, "bench_ui_update: the default preset produced no results\n");
        return 1;
    }
    ExperimentController* c = window.controller();
    if (debounce >= 0) c->setDebounceMs(debounce);
    // Connected after the window: runs once the window has handled the results.
    QElapsedTimer clock;
    std::vector<double> handled;
    std::vector<double> painted;
    bool done = false;
    QObject::connect(c, &ExperimentController::resultsReady, [&] {
        handled.push_back(clock.nsecsElapsed() / 1e6);
        window.lossChart()->view()->repaint();
        painted.push_back(clock.nsecsElapsed() / 1e6);
        done = true;
    });
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    auto measure = [&](const char* name, const std::function<void(ExperimentConfig&, int)>& edit) {
        std::vector<double> runMs;
        std::vector<double> guiMs;
        handled.clear();
        painted.clear();
        for (int r = 0; r < reps; ++r) {
            done = false;
            clock.start();
            c->tryModify([&](ExperimentConfig& x) { edit(x, r); });
            while (!done && clock.elapsed() < 30000) {
                QCoreApplication::processEvents(QEventLoop::AllEvents |
                                                QEventLoop::WaitForMoreEvents);
            }
            if (!done) {
                std::fprintf(stderr, "bench_ui_update: no results within 30 s\n");
                std::exit(1);
            }
            runMs.push_back(c->latest()->seconds * 1000.0);
            guiMs.push_back(window.lastUpdateMs());
        }
        std::printf("%s (%d reps, debounce %d ms)\n", name, reps, c->debounceMs());
        std::printf("  run on workers (median)           %7.1f ms\n", median(runMs));
        std::printf("  window takes the results (median) %7.1f ms\n", median(guiMs));
        std::printf("  edit -> charts updated (median)   %7.1f ms  (max %.1f)\n", median(handled),
                    *std::max_element(handled.begin(), handled.end()));
        std::printf(
            "  edit -> curves repainted (median) %7.1f ms  (max %.1f)  target < 150 ms: %s\n",
            median(painted), *std::max_element(painted.begin(), painted.end()),
            median(painted) < 150.0 ? "met" : "NOT met");
    };
    // The common edit: the step size of one method (the gamma slider edits the selected one);
    // only that method reruns.
    measure("gamma of PipeDream",
            [](ExperimentConfig& x, int r) { x.methods[0].step.value = r % 2 ? 0.25 : 0.2; });
    // An edit that affects every method: S (all three rerun; the data set is reused).
    measure("S (every method reruns)",
            [](ExperimentConfig& x, int r) { x.stages = r % 2 ? 8 : 7; });
    return 0;
}
