// Animation export (ui/animation): one frame per slot, GIF and MP4 that decode to the frames and
// size asked for, the refusals with their messages, and atomic writes that leave an earlier file
// or a foreign folder as it was. A tiny run (S = 4, 8 microbatches) keeps each case quick.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <filesystem>

#include "animation/animation_export.hpp"
#include "animation/animation_frames.hpp"
#include "animation/animation_options.hpp"
#include "animation/video_encoder.hpp"
#include "charts/gantt_chart.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "main_window.hpp"
#include "models/run_snapshot.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

const char* kTinyConfig = R"({
  "name": "tiny",
  "seed": 1,
  "objective": {"kind": "quadratic"},
  "data": {"source": "synthetic", "kind": "random", "rows": 40, "dim": 8, "seed": 1},
  "stages": 4,
  "batch_size": 10,
  "budget": {"epochs": 2},
  "methods": [
    {"method": "pd", "label": "PD tiny", "step_size": 0.05},
    {"method": "localsgd", "step_size": 0.05, "local_steps": 2}
  ]
})";

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The ConfigError's message of `fn`, or "" when it throws none.
template <typename Fn>
QString configErrorOf(Fn fn) {
    try {
        fn();
    } catch (const ConfigError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

}  // namespace

class TestAnimation : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    std::unique_ptr<MainWindow> window_;
    AnimationSource source_;
    int total_ = 0;  // PD's slots

    AnimationOptions options(const QString& name, int first, int end) const {
        AnimationOptions o;
        o.out = dir_.filePath(name).toStdString();
        if (name.endsWith('/')) o.out += '/';
        o.format = animationFormat(o.out, "--out");
        o.slotRange = std::pair{first, end};
        o.width = 480;
        o.height = 270;
        return o;
    }
    // No file or folder whose name holds ".tmp-" is left in the test folder.
    bool noTemporaries() const {
        for (const auto& e : std::filesystem::directory_iterator(dir_.path().toStdString())) {
            if (e.path().filename().string().find(".tmp-") != std::string::npos) return false;
        }
        return true;
    }

  private slots:
    void initTestCase() {
        test::isolateSettings();
        QVERIFY(dir_.isValid());
        const ExperimentConfig config = ExperimentConfig::fromText(kTinyConfig, "tiny");
        ExperimentResult result = runExperiment(config, RunOptions());
        window_ = std::make_unique<MainWindow>();
        QString error;
        QVERIFY2(window_->showFinishedRun(std::move(result), 0.1, &error), qPrintable(error));
        source_ = animationSource(*window_);
        source_.defaultMethod = -1;
        total_ = source_.snapshot->result(0).timeline->totalSlots;
        QVERIFY(total_ > 12);
    }

    void pngFolderHoldsOneFramePerSlot() {
        const AnimationOptions o = options("frames/", 3, 10);
        const AnimationWritten w = exportAnimation(source_, o);
        QCOMPARE(w.frames, 7);
        QDir folder(dir_.filePath("frames"));
        const QStringList pngs = folder.entryList({"*.png"}, QDir::Files, QDir::Name);
        QCOMPARE(pngs.size(), 7);
        QCOMPARE(pngs.first(), QString("frame_00000.png"));
        QCOMPARE(pngs.last(), QString("frame_00006.png"));
        QVERIFY(folder.exists(kAnimationMarker));
        const QImage first(folder.filePath(pngs.first()));
        QCOMPARE(first.size(), QSize(480, 270));
        // Each frame shows one more slot run: consecutive frames differ.
        QVERIFY(first != QImage(folder.filePath(pngs[1])));
        // Written again over itself (the marker says it is an export's): now 2 frames.
        QCOMPARE(exportAnimation(source_, options("frames/", 0, 2)).frames, 2);
        QCOMPARE(folder.entryList({"*.png"}, QDir::Files).size(), 2);
        QVERIFY(noTemporaries());
    }

    void gifDecodesToItsFramesAndSize() {
        const AnimationOptions o = options("run.gif", 0, 12);
        QCOMPARE(exportAnimation(source_, o).frames, 12);
        const video::VideoInfo info = video::probeVideo(o.out);
        QCOMPARE(info.codec, std::string("gif"));
        QCOMPARE(info.frames, 12);
        QCOMPARE(info.width, 480);
        QCOMPARE(info.height, 270);
        QVERIFY(qAbs(info.durationSeconds - 1.2) < 0.05);  // 10 fps
    }

    void mp4DecodesToItsFramesAndSize() {
        AnimationOptions o = options("run.mp4", 2, total_);
        o.fps = 25;
        o.panels = AnimationPanels::All;
        const int frames = total_ - 2;
        QCOMPARE(exportAnimation(source_, o).frames, frames);
        const video::VideoInfo info = video::probeVideo(o.out);
        QCOMPARE(info.codec, std::string("h264"));
        QCOMPARE(info.frames, frames);
        QCOMPARE(info.width, 480);
        QCOMPARE(info.height, 270);
        QVERIFY(qAbs(info.durationSeconds - frames / 25.0) < 0.1);
    }

    void unknownExtensionIsRefusedWithWhatIsAllowed() {
        const QString message = configErrorOf([] { animationFormat("film.avi", "--out"); });
        QCOMPARE(message, QString("--out = \"film.avi\" is not allowed: .gif, .mp4, or a folder "
                                  "path ending in /"));
        QVERIFY(!configErrorOf([] { animationFormat("frames", "--out"); }).isEmpty());
        QVERIFY(configErrorOf([] { animationFormat("A.GIF", "--out"); }).isEmpty());
    }

    void badSlotsFpsAndSizeAreRefused() {
        QVERIFY(configErrorOf([] {
                    parseSlotRange("5:3", "--slots");
                }).startsWith("--slots = \"5:3\" is not allowed: A:B"));
        QVERIFY(!configErrorOf([] { parseSlotRange("-1:3", "--slots"); }).isEmpty());
        QVERIFY(!configErrorOf([] { parseSlotRange("1", "--slots"); }).isEmpty());
        QCOMPARE(configErrorOf([] { parseFps("0", "--fps"); }),
                 QString("--fps = \"0\" is not allowed: frames per second, a whole number from 1 "
                         "to 60"));
        QVERIFY(configErrorOf([] {
                    parseFrameSize("961x540", video::VideoFormat::Mp4, "--size");
                }).contains("both even for .mp4"));
        QVERIFY(configErrorOf([] {
                    parseFrameSize("961x540", video::VideoFormat::Gif, "--size");
                }).isEmpty());
        QVERIFY(!configErrorOf([] {
                     parseFrameSize("100x50", video::VideoFormat::Gif, "--size");
                 }).isEmpty());
    }

    void slotsBeyondTheRunAreRefused() {
        const AnimationOptions o = options("late.gif", 0, total_ + 1);
        const QString message = configErrorOf([&] { exportAnimation(source_, o); });
        QCOMPARE(message, QString("--slots = \"0:%1\" is not allowed: A:B with 0 <= A < B <= %2 "
                                  "(the method's run has %2 slots)")
                              .arg(total_ + 1)
                              .arg(total_));
        QVERIFY(!QFile::exists(QString::fromStdString(o.out)));
    }

    void aFailedExportLeavesTheEarlierFile() {
        const QString path = dir_.filePath("keep.gif");
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("earlier animation");
        }
        // Cancelled after a few frames were encoded into the temporary file.
        std::atomic<bool> cancel{false};
        const auto progress = [&](int done, int) {
            if (done == 4) cancel.store(true);
        };
        QVERIFY_THROWS_EXCEPTION(Interrupted, exportAnimation(source_, options("keep.gif", 0, 10),
                                                              {}, progress, &cancel));
        QCOMPARE(readAll(path), QByteArray("earlier animation"));
        // The encoder refuses (an odd size for H.264, past the option checks).
        const QString mp4 = dir_.filePath("keep.mp4");
        QFile::copy(path, mp4);
        AnimationOptions odd = options("keep.mp4", 0, 5);
        odd.width = 481;
        QVERIFY_THROWS_EXCEPTION(IoError, exportAnimation(source_, odd));
        QCOMPARE(readAll(mp4), QByteArray("earlier animation"));
        QVERIFY(noTemporaries());
    }

    void aFolderNotWrittenByAnExportIsRefused() {
        QDir(dir_.path()).mkdir("mine");
        {
            QFile f(dir_.filePath("mine/notes.txt"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("mine");
        }
        const QString message =
            configErrorOf([&] { exportAnimation(source_, options("mine/", 0, 3)); });
        QVERIFY2(message.contains(kAnimationMarker), qPrintable(message));
        QCOMPARE(readAll(dir_.filePath("mine/notes.txt")), QByteArray("mine"));
    }

    void methodsByLabelOrKind() {
        const RunSnapshot& s = *source_.snapshot;
        QCOMPARE(animationMethod(s, "", "--method"), 0);
        QCOMPARE(animationMethod(s, "pd tiny", "--method"), 0);
        QCOMPARE(animationMethod(s, "localsgd", "--method"), 1);
        const QString message = configErrorOf([&] { animationMethod(s, "rpd", "--method"); });
        QVERIFY2(message.startsWith("--method = \"rpd\" is not allowed") &&
                     message.contains("\"PD tiny\""),
                 qPrintable(message));
    }

    // Five methods under the loss panel: every legend name is drawn whole inside the panel
    // (the legend wraps onto rows and the plot gives up the height), at the default size and
    // at smaller ones.
    void theLossLegendNamesEveryMethod_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("960x540") << QSize(960, 540);
        QTest::newRow("640x360") << QSize(640, 360);
        QTest::newRow("480x270") << QSize(480, 270);
    }
    void theLossLegendNamesEveryMethod() {
        QFETCH(QSize, size);
        static const SnapshotPtr five = [] {
            auto config = nlohmann::json::parse(kTinyConfig);
            config["methods"] = nlohmann::json::array(
                {{{"method", "pd"}, {"step_size", 0.05}},
                 {{"method", "rpd"}, {"step_size", 0.05}},
                 {{"method", "localsgd"}, {"step_size", 0.05}, {"local_steps", 2}},
                 {{"method", "sgd"}, {"step_size", 0.05}},
                 {{"method", "fill-drain"}, {"step_size", 0.05}}});
            auto snapshot = std::make_shared<RunSnapshot>();
            snapshot->experiment = runExperiment(ExperimentConfig::fromJson(config), RunOptions());
            deriveRunViews(*snapshot);
            return SnapshotPtr(snapshot);
        }();
        AnimationFrames frames(five, 0, AnimationPanels::All, size);
        frames.render(3);
        // One entry per method ("PD, γ=0.05", ...), each drawn whole.
        const QStringList shown = frames.lossLegendShown();
        QCOMPARE(shown.size(), 5);
        QCOMPARE(QSet<QString>(shown.begin(), shown.end()).size(), 5);
    }

    // The Gantt window: the chart's opening view (max(24, 3 S) slots with unit costs) from 0
    // until the cursor passes 90 % of it, then on by 80 % of it (the cursor a tenth of the way
    // in), never past the run's end.
    void ganttWindowPagesWithTheCursor() {
        auto params = [](int stages) {
            ScheduleParams p;
            p.stages = stages;
            return p;
        };
        QCOMPARE(AnimationFrames::ganttWindow(0, 614, params(8)), std::make_pair(0, 24));
        QCOMPARE(AnimationFrames::ganttWindow(21, 614, params(8)), std::make_pair(0, 24));
        QCOMPARE(AnimationFrames::ganttWindow(22, 614, params(8)), std::make_pair(19, 24));
        QCOMPARE(AnimationFrames::ganttWindow(614, 614, params(8)), std::make_pair(590, 24));
        QCOMPARE(AnimationFrames::ganttWindow(5, 10, params(2)), std::make_pair(0, 10));
        QCOMPARE(AnimationFrames::ganttWindow(100, 1000, params(16)).second, 48);
        for (int cursor = 0; cursor <= 614; ++cursor) {
            const auto [first, count] = AnimationFrames::ganttWindow(cursor, 614, params(8));
            QVERIFY(cursor >= first && cursor <= first + count);
        }
    }

    // With costs other than one slot the animation's window is still the Gantt chart's opening
    // view: F = 2, B = 3 slots on 8 stages make a crossing of 8 * 5 / 2 = 20 slots, three of
    // them 60 (the unit-cost rule max(24, 3 S) would give 24).
    void ganttWindowIsTheChartsStartUpView() {
        ScheduleParams p;
        p.stages = 8;
        p.microbatches = 40;
        p.costs.forwardSlots = 2;
        p.costs.backwardSlots = 3;
        auto timeline = std::make_shared<const Timeline>(buildTimeline(p));
        GanttChart chart;
        chart.setTimeline(timeline);
        QCOMPARE(chart.startUpSlots(), 60);
        QCOMPARE(AnimationFrames::ganttWindow(0, timeline->totalSlots, timeline->params),
                 std::make_pair(0, chart.startUpSlots()));
        QCOMPARE(chart.visibleLast() - chart.visibleFirst(), 60.0);
    }
};

QTEST_MAIN(TestAnimation)
#include "tst_animation.moc"
