// StalenessHeatmap: the delays it encodes against the engine and the golden cases, statistics,
// aggregation, exports, zoom.
#include <QApplication>
#include <QFile>
#include <QHelpEvent>
#include <QImage>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QToolTip>
#include <QtTest>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include "charts/colour_map.hpp"
#include "charts/delay_by_stages.hpp"
#include "charts/staleness_heatmap.hpp"
#include "core/golden_case.hpp"
#include "schedule/delays.hpp"
#include "schedule/timeline.hpp"
#include "ui_test_support.hpp"

using pipelens::DelayTable;
using pipelens::DelayUnit;
using pipelens::ScheduleKind;
using pipelens::ScheduleParams;
using pipelens::ui::StalenessHeatmap;

namespace {

std::shared_ptr<const DelayTable> pdDelays(int stages, int microbatches) {
    ScheduleParams p;
    p.kind = ScheduleKind::PipeDream;
    p.stages = stages;
    p.microbatches = microbatches;
    return std::make_shared<const DelayTable>(pipelens::buildTimeline(p));
}

// Max and mean of every block's delay over updates [ceil(shown/2), shown), by brute force.
std::pair<long long, double> secondHalfStats(const DelayTable& t, long long shown) {
    const auto first = static_cast<long long>(std::ceil(shown / 2.0));
    long long max = 0;
    double sum = 0;
    long long n = 0;
    for (long long k = first; k < shown; ++k) {
        for (int j = 0; j < t.stages(); ++j) {
            max = std::max(max, t.delay(k, j));
            sum += static_cast<double>(t.delay(k, j));
            ++n;
        }
    }
    return {max, n ? sum / static_cast<double>(n) : 0.0};
}

int distinctColours(const QImage& image) {
    QSet<QRgb> seen;
    for (int y = 0; y < image.height(); y += 2) {
        for (int x = 0; x < image.width(); x += 2) seen.insert(image.pixel(x, y));
    }
    return static_cast<int>(seen.size());
}

// Renders the heatmap into a fresh image and checks, on a grid of points in the plot, that each
// pixel has the colour of the delay the chart says it shows there (the largest of the updates an
// aggregated column covers). Returns the share of points that do, and counts the colours seen.
double shareShowingTheirDelay(const StalenessHeatmap& map, const DelayTable& table, int* colours) {
    QImage image(map.size(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::black);
    const_cast<StalenessHeatmap&>(map).render(&image);
    const double top = std::max<double>(1.0, static_cast<double>(table.maxDelay()));
    int points = 0;
    int right = 0;
    QSet<QRgb> seen;
    for (int y = 0; y < image.height(); y += 5) {
        for (int x = 0; x < image.width(); x += 7) {
            long long k = 0;
            int j = 0;
            if (!map.cellAtPosition(QPointF(x + 0.5, y + 0.5), &k, &j)) continue;
            ++points;
            const int index = static_cast<int>(
                std::clamp(static_cast<double>(table.delay(k, j)) / top * 255.0 + 0.5, 0.0, 255.0));
            const QRgb pixel = image.pixel(x, y);
            right += pixel == pipelens::ui::viridis(index) ? 1 : 0;
            seen.insert(pixel);
        }
    }
    *colours = static_cast<int>(seen.size());
    return points > 1000 ? static_cast<double>(right) / points : 0.0;
}

std::shared_ptr<const DelayTable> twoBwDelays(int stages, int microbatches) {
    ScheduleParams p;
    p.kind = ScheduleKind::TwoBw;
    p.stages = stages;
    p.microbatches = microbatches;
    return std::make_shared<const DelayTable>(pipelens::buildTimeline(p));
}

}  // namespace

class TestStalenessHeatmap : public QObject {
    Q_OBJECT

  private slots:
    void showsEmptyStateWithoutDelays() {
        StalenessHeatmap map;
        map.resize(500, 200);
        QCOMPARE(map.valueAt(0, 0), -1LL);
        QCOMPARE(map.cellDescription(0, 0), QString());
        QCOMPARE(map.measuredMax(), 0.0);
        const QString problem =
            pipelens::ui::test::checkEmptyState(map, "Run an experiment to see its pipeline");
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(map.focusPolicy(), Qt::StrongFocus);
    }

    void encodesTheGoldenDelays_data() {
        QTest::addColumn<QString>("goldenCase");
        QTest::addColumn<int>("stages");
        QTest::addColumn<int>("microbatches");
        QTest::newRow("S=4 N=24") << "pd-quadratic-S4" << 4 << 24;
        QTest::newRow("S=5 N=30") << "pd-logistic-S5" << 5 << 30;
    }
    void encodesTheGoldenDelays() {
        QFETCH(QString, goldenCase);
        QFETCH(int, stages);
        QFETCH(int, microbatches);
        auto table = pdDelays(stages, microbatches);
        StalenessHeatmap map;
        map.resize(900, 300);
        map.setDelays(table);
        QCOMPARE(map.delays(), table);
        const auto rows = golden::csvRows(golden::dir(goldenCase.toStdString()) + "/delays.csv");
        QCOMPARE(static_cast<long long>(rows.size()), table->updates());
        QCOMPARE(table->updates(), static_cast<long long>(stages) * microbatches);
        for (long long k = 0; k < table->updates(); ++k) {
            const auto& row = rows[static_cast<size_t>(k)];
            for (int j = 0; j < stages; ++j) {
                QCOMPARE(map.valueAt(k, j), table->delay(k, j));
                QCOMPARE(map.valueAt(k, j), std::stoll(row.at(static_cast<size_t>(3 + j))));
            }
        }
        QCOMPARE(map.valueAt(table->updates(), 0), -1LL);
        QCOMPARE(map.valueAt(0, stages), -1LL);
    }

    void reportsTheSteadyStateMaximum_data() {
        QTest::addColumn<int>("stages");
        QTest::addColumn<double>("expectedMax");  // S^2 - S/2 (SPEC section 3)
        QTest::newRow("S=4") << 4 << 14.0;
        QTest::newRow("S=8") << 8 << 60.0;
        QTest::newRow("S=5") << 5 << 22.0;  // odd: S^2 - S/2 - 1/2
    }
    void reportsTheSteadyStateMaximum() {
        QFETCH(int, stages);
        QFETCH(double, expectedMax);
        auto table = pdDelays(stages, 10 * stages);
        StalenessHeatmap map;
        map.setDelays(table);
        QCOMPARE(map.measuredMax(), expectedMax);
        QCOMPARE(map.formulaMax(), expectedMax);
        const auto [max, mean] = secondHalfStats(*table, table->updates());
        QCOMPARE(map.measuredMax(), double(max));
        QVERIFY(std::abs(map.measuredMean() - mean) < 1e-9);
        // The engine's statistics agree.
        const pipelens::DelayStats engine = pipelens::delayStats(*table, 0.5);
        QCOMPARE(map.measuredMax(), double(engine.max));
        QVERIFY(std::abs(map.measuredMean() - engine.mean) < 1e-9);
        QCOMPARE(map.formulaMax(), engine.formulaMax);
        // SPEC: the mean is about S^2 / 2.
        QVERIFY(std::abs(map.measuredMean() - stages * stages / 2.0) < 0.25 * stages * stages);
    }

    void statisticsFollowTheCursor() {
        auto table = pdDelays(6, 60);
        StalenessHeatmap map;
        map.setDelays(table);
        const double fullMax = map.measuredMax();
        const double fullMean = map.measuredMean();
        for (long long cursor : {1LL, 7LL, 40LL, 101LL, 200LL, 359LL}) {
            map.setCursorUpdate(cursor);
            QCOMPARE(map.cursorUpdate(), cursor);
            const auto [max, mean] = secondHalfStats(*table, cursor);
            QCOMPARE(map.measuredMax(), double(max));
            QVERIFY2(std::abs(map.measuredMean() - mean) < 1e-9,
                     qPrintable(QString::number(cursor)));
            QCOMPARE(map.valueAt(cursor - 1, 0), table->delay(cursor - 1, 0));
            QCOMPARE(map.valueAt(cursor, 0), -1LL);  // not run yet
        }
        map.setCursorUpdate(table->updates());
        QCOMPARE(map.measuredMax(), fullMax);
        QVERIFY(std::abs(map.measuredMean() - fullMean) < 1e-9);
        map.setCursorUpdate(0);
        QCOMPARE(map.measuredMax(), 0.0);
        map.setCursorUpdate(-1);
        QCOMPARE(map.measuredMax(), fullMax);
    }

    void describesCells() {
        auto table = pdDelays(4, 24);
        StalenessHeatmap map;
        map.setDelays(table);
        for (long long k : {0LL, 17LL, 50LL, 95LL}) {
            for (int j = 0; j < 4; ++j) {
                const auto& u = table->update(k);
                const long long h = table->forwardIndex(u.microbatch, j);
                QCOMPARE(map.cellDescription(k, j),
                         QStringLiteral("update k=%1: B(m=%2) on stage %3 read block %4 with delay "
                                        "%5 (version from update h(m, j) = %6)")
                             .arg(k)
                             .arg(u.microbatch)
                             .arg(u.stage + 1)
                             .arg(j + 1)
                             .arg(k - h)
                             .arg(h));
            }
        }
        QCOMPARE(map.cellDescription(96, 0), QString());
        // Hovering a cell (one update per pixel column or more) shows its description.
        map.resize(900, 300);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        long long k = 0;
        long long first = 0;
        long long last = 0;
        int j = 0;
        QVERIFY(map.cellAtPosition(QPointF(450, 150), &k, &j, &first, &last));
        QCOMPARE(first, last);
        QHelpEvent help(QEvent::ToolTip, QPoint(450, 150), map.mapToGlobal(QPoint(450, 150)));
        QApplication::sendEvent(&map, &help);
        QCOMPARE(QToolTip::text(), map.cellDescription(k, j));
    }

    void aggregatedColumnsShowTheirLargestDelay() {
        // 20 PD updates per pixel column or so: the hover target is the largest delay covered.
        auto table = pdDelays(8, 400);
        StalenessHeatmap map;
        map.resize(400, 300);
        map.setDelays(table);
        int checked = 0;
        for (int x = 0; x < 400; x += 3) {
            for (int y = 0; y < 300; y += 10) {
                long long k = 0;
                long long first = 0;
                long long last = 0;
                int j = 0;
                if (!map.cellAtPosition(QPointF(x, y), &k, &j, &first, &last)) continue;
                QVERIFY(first <= k && k <= last && last < table->updates());
                QVERIFY(last > first);
                long long best = -1;
                for (long long u = first; u <= last; ++u) best = std::max(best, table->delay(u, j));
                QCOMPARE(table->delay(k, j), best);
                ++checked;
            }
        }
        QVERIFY(checked > 100);
    }

    void binnedAggregationIsExact() {
        // S = 64, N = 2000: 128,000 updates, more delays than the aggregation tree keeps per
        // update, so columns combine whole bins (full view) or bins plus partial ones (zoomed).
        auto table = pdDelays(64, 2000);
        StalenessHeatmap map;
        map.resize(900, 400);
        map.setDelays(table);
        auto checkColumns = [&]() {
            int checked = 0;
            for (int x = 0; x < 900; x += 7) {
                for (int y = 0; y < 400; y += 37) {
                    long long k = 0;
                    long long first = 0;
                    long long last = 0;
                    int j = 0;
                    if (!map.cellAtPosition(QPointF(x, y), &k, &j, &first, &last)) continue;
                    long long best = -1;
                    for (long long u = first; u <= last; ++u)
                        best = std::max(best, table->delay(u, j));
                    if (table->delay(k, j) != best) return -1;
                    ++checked;
                }
            }
            return checked;
        };
        QVERIFY(checkColumns() > 500);
        map.setVisibleRange(50001, 70003);
        QVERIFY(checkColumns() > 500);
        // Statistics over prefixes that end inside a bin.
        for (long long cursor : {1001LL, 64007LL, 127999LL}) {
            map.setCursorUpdate(cursor);
            const auto [max, mean] = secondHalfStats(*table, cursor);
            QCOMPARE(map.measuredMax(), double(max));
            QVERIFY(std::abs(map.measuredMean() - mean) < 1e-9);
        }
    }

    void exportsPngAtTheRequestedScale_data() {
        QTest::addColumn<double>("scale");
        QTest::newRow("1x") << 1.0;
        QTest::newRow("2x") << 2.0;
    }
    void exportsPngAtTheRequestedScale() {
        QFETCH(double, scale);
        QTemporaryDir dir;
        StalenessHeatmap map;
        map.resize(640, 240);
        map.setDelays(pdDelays(4, 24));
        const QString path = dir.filePath(QStringLiteral("heatmap.png"));
        QString error;
        QVERIFY2(map.exportPng(path, scale, &error), qPrintable(error));
        QImage image(path);
        QCOMPARE(image.size(), QSize(qRound(640 * scale), qRound(240 * scale)));
        QVERIFY(distinctColours(image) > 3);
    }

    void exportsParseableSvg() {
        QTemporaryDir dir;
        StalenessHeatmap map;
        map.resize(640, 240);
        map.setDelays(pdDelays(4, 12));
        const QString path = dir.filePath(QStringLiteral("heatmap.svg"));
        QString error;
        QVERIFY2(map.exportSvg(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray svg = file.readAll();
        QVERIFY(svg.startsWith("<?xml"));
        QVERIFY(svg.contains("<svg"));
        QVERIFY(svg.contains("</svg>"));
    }

    // The colour bar says what its numbers count: delays in block updates (SPEC §3), drawn
    // next to the bar (in the SVG as one text element).
    void theColourBarNamesItsUnit() {
        QCOMPARE(StalenessHeatmap::colourBarTitle(), QStringLiteral("delay (block updates)"));
        StalenessHeatmap map;
        map.resize(640, 240);
        map.setDelays(pdDelays(4, 12));
        QVERIFY(pipelens::ui::test::exportedSvg(map).contains(
            QStringLiteral(">delay (block updates)<")));
    }

    void showsEachUnit_data() {
        QTest::addColumn<bool>("twoBw");
        QTest::newRow("pd S=4") << false;
        QTest::newRow("2bw S=4") << true;
    }
    void showsEachUnit() {
        // SPEC section 2.1: the same reads in block updates, optimizer steps and slots; the
        // heatmap's values, colours, header and colour bar follow the unit chosen.
        QFETCH(bool, twoBw);
        auto table = twoBw ? twoBwDelays(4, 24) : pdDelays(4, 24);
        StalenessHeatmap map;
        map.resize(900, 320);
        map.setDelays(table, !twoBw);
        QCOMPARE(map.unit(), DelayUnit::BlockUpdates);  // the default: the paper's unit
        QSignalSpy changed(&map, &StalenessHeatmap::unitChanged);
        for (const DelayUnit unit :
             {DelayUnit::OptimizerSteps, DelayUnit::Slots, DelayUnit::BlockUpdates}) {
            map.setUnit(unit);
            QCOMPARE(map.unit(), unit);
            long long largest = 0;
            for (long long k = 0; k < table->updates(); ++k) {
                for (int j = 0; j < 4; ++j) {
                    QCOMPARE(map.valueAt(k, j), table->delayIn(unit, k, j));
                    largest = std::max(largest, table->delayIn(unit, k, j));
                }
            }
            const QString title = StalenessHeatmap::colourBarTitle(unit);
            QVERIFY(title.contains(QString::fromUtf8(pipelens::delayUnitWords(unit))));
            QVERIFY(pipelens::ui::test::exportedSvg(map).contains(QStringLiteral(">") + title +
                                                                  QStringLiteral("<")));
            // The second half's maximum in this unit, and the formula only in block updates.
            const long long first = (table->updates() + 1) / 2;
            long long halfMax = 0;
            for (long long k = first; k < table->updates(); ++k) {
                for (int j = 0; j < 4; ++j) halfMax = std::max(halfMax, table->delayIn(unit, k, j));
            }
            QCOMPARE(map.measuredMax(), static_cast<double>(halfMax));
            QCOMPARE(std::isnan(map.formulaMax()), twoBw || unit != DelayUnit::BlockUpdates);
            if (unit != DelayUnit::BlockUpdates) {
                QVERIFY(
                    map.statsText().contains(QString::fromUtf8(pipelens::delayUnitWords(unit))));
                QVERIFY(map.cellDescription(first, 0).contains(
                    QString::fromUtf8(pipelens::delayUnitWords(unit))));
            }
            if (largest > 0) {
                // Each pixel has its cell's colour on this unit's scale.
                QImage image(map.size(), QImage::Format_ARGB32_Premultiplied);
                map.render(&image);
                int checked = 0;
                for (int y = 0; y < image.height(); y += 9) {
                    for (int x = 0; x < image.width(); x += 11) {
                        long long k = 0;
                        int j = 0;
                        if (!map.cellAtPosition(QPointF(x + 0.5, y + 0.5), &k, &j)) continue;
                        const int index = static_cast<int>(
                            std::clamp(static_cast<double>(table->delayIn(unit, k, j)) /
                                               static_cast<double>(largest) * 255.0 +
                                           0.5,
                                       0.0, 255.0));
                        if (image.pixel(x, y) != pipelens::ui::viridis(index)) continue;
                        ++checked;
                    }
                }
                QVERIFY2(checked > 500, qPrintable(QString::number(checked)));
            }
        }
        QCOMPARE(changed.size(), 3);
        map.setUnit(DelayUnit::BlockUpdates);  // unchanged: no signal
        QCOMPARE(changed.size(), 3);
    }

    void delayByStagesInEachUnit() {
        // The max-delay-vs-S figure's numbers in each unit: PD's steady state (second half of
        // N = 10 S) is S - 1 optimizer steps and 2S - 1 slots, both from block 1's own reads.
        for (int S = 2; S <= 8; ++S) {
            const auto steps =
                pipelens::ui::pipeDreamDelayStatsCached(S, DelayUnit::OptimizerSteps);
            const auto inSlots = pipelens::ui::pipeDreamDelayStatsCached(S, DelayUnit::Slots);
            const auto updates =
                pipelens::ui::pipeDreamDelayStatsCached(S, DelayUnit::BlockUpdates);
            QCOMPARE(steps.max, static_cast<double>(S - 1));
            QCOMPARE(inSlots.max, static_cast<double>(2 * S - 1));
            QCOMPARE(updates.max,
                     static_cast<double>(pipelens::ui::pipeDreamDelayStatsCached(S).max));
            QVERIFY(pipelens::ui::cachedPipeDreamDelayStats(S, DelayUnit::Slots).has_value());
        }
        // The means against brute force over the delay table.
        const auto table = pdDelays(4, 40);
        const long long first = (table->updates() + 1) / 2;
        for (const DelayUnit unit : {DelayUnit::OptimizerSteps, DelayUnit::Slots}) {
            double sum = 0;
            for (long long k = first; k < table->updates(); ++k) {
                for (int j = 0; j < 4; ++j) sum += static_cast<double>(table->delayIn(unit, k, j));
            }
            const double mean = sum / static_cast<double>((table->updates() - first) * 4);
            QCOMPARE(pipelens::ui::pipeDreamDelayStatsCached(4, unit).mean, mean);
        }
        // The worker computes a unit's missing S and says when.
        pipelens::ui::DelayByStagesWorker worker;
        std::atomic<bool> done{false};
        QVERIFY(worker.request(
            {9, 10}, [&] { done = true; }, DelayUnit::Slots));
        QTRY_VERIFY(done.load());
        QCOMPARE(pipelens::ui::cachedPipeDreamDelayStats(10, DelayUnit::Slots)->max, 19.0);
        QVERIFY(!worker.request(
            {9, 10}, [] {}, DelayUnit::Slots));  // cached: nothing to do
    }

    void exportsCsvInEveryUnit() {
        QTemporaryDir dir;
        StalenessHeatmap map;
        auto table = twoBwDelays(4, 16);
        map.setDelays(table, false);
        map.setExportTitle(QStringLiteral("2BW"));
        map.setUnit(DelayUnit::OptimizerSteps);
        const QString path = dir.filePath(QStringLiteral("units.csv"));
        QVERIFY(map.exportCsv(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readLine().trimmed(),
                 QByteArray("method,block_update,updated_stage,microbatch,slot,"
                            "block_updates_block1,block_updates_block2,block_updates_block3,"
                            "block_updates_block4,optimizer_steps_block1,optimizer_steps_block2,"
                            "optimizer_steps_block3,optimizer_steps_block4,slots_block1,"
                            "slots_block2,slots_block3,slots_block4"));
        const auto rows = golden::csvRows(path.toStdString());
        QCOMPARE(static_cast<long long>(rows.size()), table->updates());
        for (size_t k = 0; k < rows.size(); ++k) {
            for (int j = 0; j < 4; ++j) {
                QCOMPARE(std::stoll(rows[k][static_cast<size_t>(9 + j)]),
                         table->delaySteps(static_cast<long long>(k), j));
                QCOMPARE(std::stoll(rows[k][static_cast<size_t>(13 + j)]),
                         table->delaySlots(static_cast<long long>(k), j));
            }
        }
    }

    void exportsCsvOfTheShownUpdates() {
        QTemporaryDir dir;
        auto table = pdDelays(5, 30);
        StalenessHeatmap map;
        map.setDelays(table);
        map.setExportTitle(QStringLiteral("PD"));
        const QString path = dir.filePath(QStringLiteral("delays.csv"));
        QVERIFY(map.exportCsv(path));
        // The golden delays.csv's values row for row, with stages and blocks numbered from 1 as
        // on screen (the authors' file counts from 0) and the method and slot added.
        const auto mine = golden::csvRows(path.toStdString());
        const auto reference = golden::csvRows(golden::dir("pd-logistic-S5") + "/delays.csv");
        QCOMPARE(mine.size(), reference.size());
        for (size_t i = 0; i < mine.size(); ++i) {
            QCOMPARE(mine[i].size(), size_t(10));
            QCOMPARE(mine[i][0], std::string("\"PD\""));
            QCOMPARE(mine[i][1], reference[i][0]);
            QCOMPARE(std::stoi(mine[i][2]), std::stoi(reference[i][1]) + 1);
            QCOMPARE(mine[i][3], reference[i][2]);
            QCOMPARE(std::stoi(mine[i][4]), table->update(static_cast<long long>(i)).slot);
            for (size_t j = 0; j < 5; ++j) QCOMPARE(mine[i][5 + j], reference[i][3 + j]);
        }
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readLine().trimmed(),
                 QByteArray("method,block_update,updated_stage,microbatch,slot,delay_block1,"
                            "delay_block2,delay_block3,delay_block4,delay_block5"));
        map.setCursorUpdate(40);
        QVERIFY(map.exportCsv(path));
        QCOMPARE(golden::csvRows(path.toStdString()).size(), size_t(40));
    }

    void zoomsAndFitsAll() {
        auto table = pdDelays(4, 40);
        StalenessHeatmap map;
        map.resize(700, 250);
        map.setDelays(table);
        QCOMPARE(map.visibleLast(), double(table->updates()));
        QSignalSpy spy(&map, &StalenessHeatmap::visibleRangeChanged);
        map.setVisibleRange(20.0, 60.0);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(map.visibleFirst(), 20.0);
        QCOMPARE(map.visibleLast(), 60.0);
        QTest::keyClick(&map, Qt::Key_Minus);
        QVERIFY(map.visibleLast() - map.visibleFirst() > 40.0);
        map.fitAll();
        QCOMPARE(map.visibleFirst(), 0.0);
        QCOMPARE(map.visibleLast(), double(table->updates()));
        QCOMPARE(spy.last().at(0).toDouble(), 0.0);
        QCOMPARE(spy.last().at(1).toDouble(), double(table->updates()));
    }

    void paintsAggregatedLargeRuns() {
        auto table = pdDelays(128, 9873);
        StalenessHeatmap map;
        map.resize(1200, 600);
        map.setDelays(table);
        QCOMPARE(map.measuredMax(), double(128 * 128 - 64));
        // Each frame into its own image: every sampled plot pixel has its delay's colour (a few
        // on row edges may round to the neighbouring row).
        int colours = 0;
        const double full = shareShowingTheirDelay(map, *table, &colours);
        QVERIFY2(full > 0.95, qPrintable(QString::number(full)));
        QVERIFY(colours > 20);
        // Zoomed in to 200 updates, all before the cursor.
        map.setCursorUpdate(table->updates() / 3);
        map.setVisibleRange(100000, 100200);
        const double zoomed = shareShowingTheirDelay(map, *table, &colours);
        QVERIFY2(zoomed > 0.95, qPrintable(QString::number(zoomed)));
        QVERIFY(colours > 20);
    }

    void theColourMapIsViridis() {
        // Published viridis values (matplotlib's table, CC0): first, middle and last entries,
        // and two between the control points a few-stop interpolation would pass through
        // (it gives #3f2a70 and #74cd5a there).
        QCOMPARE(pipelens::ui::viridis(0), qRgb(0x44, 0x01, 0x54));
        QCOMPARE(pipelens::ui::viridis(128), qRgb(0x21, 0x91, 0x8c));
        QCOMPARE(pipelens::ui::viridis(255), qRgb(0xfd, 0xe7, 0x25));
        QCOMPARE(pipelens::ui::viridis(32), qRgb(0x47, 0x2d, 0x7b));
        QCOMPARE(pipelens::ui::viridis(200), qRgb(0x70, 0xcf, 0x57));
        QCOMPARE(pipelens::ui::kViridis.size(), size_t(256));
        // Brightness (luma) rises from the first entry to the last; 8-bit rounding makes a few
        // neighbours differ by less than half a level either way.
        auto luma = [](QRgb c) {
            return 0.2126 * qRed(c) + 0.7152 * qGreen(c) + 0.0722 * qBlue(c);
        };
        for (int i = 1; i < 256; ++i)
            QVERIFY(luma(pipelens::ui::viridis(i)) > luma(pipelens::ui::viridis(i - 1)) - 0.5);
        // Out-of-range indices are clamped.
        QCOMPARE(pipelens::ui::viridis(-3), pipelens::ui::viridis(0));
        QCOMPARE(pipelens::ui::viridis(999), pipelens::ui::viridis(255));
    }

    // At S = 128 the default budget (N = 300) is too short for steady state: the header says
    // so and what its maximum covers; at S = 8 it is the formula; a fill-drain table is not
    // compared with PipeDream's formula at all.
    // Block labels are evenly spaced from block 1 at any S (S = 32 once read 1, 2, 4, 8, 12...).
    void blockLabelsAreEvenlySpaced() {
        for (const int blocks : {4, 16, 32, 128}) {
            for (const double row : {3.0, 7.0, 16.0, 40.0}) {
                const std::vector<int> shown = StalenessHeatmap::labelledBlocks(blocks, row, 14.0);
                QVERIFY(!shown.empty());
                QCOMPARE(shown.front(), 1);
                const int step = shown.size() > 1 ? shown[1] - shown[0] : blocks;
                QVERIFY2(
                    step * row >= 16.0 || step >= blocks,
                    qPrintable(QString("S=%1 row %2: step %3").arg(blocks).arg(row).arg(step)));
                for (size_t i = 1; i < shown.size(); ++i) QCOMPARE(shown[i] - shown[i - 1], step);
                QVERIFY(shown.back() <= blocks && shown.back() + step > blocks);
            }
        }
    }

    void theHeaderSaysWhatTheMeasuredMaximumCovers() {
        auto table = [](ScheduleKind kind, int S) {
            ScheduleParams p;
            p.kind = kind;
            p.stages = S;
            p.microbatches = 300;
            return std::make_shared<const DelayTable>(buildTimeline(p));
        };
        StalenessHeatmap map;
        map.resize(900, 300);
        map.setDelays(table(ScheduleKind::PipeDream, 128));
        QCOMPARE(map.measuredMax(), 20352.0);
        QVERIFY2(map.statsText().startsWith(
                     "max delay measured 20352 (steady-state S\u00b2\u2212S/2 = 16320) \u2014 the "
                     "run is too short for steady state: this max is the start-up stripe, which "
                     "exceeds the formula"),
                 qPrintable(map.statsText()));

        map.setDelays(table(ScheduleKind::PipeDream, 8));
        QVERIFY2(
            map.statsText().startsWith("max delay measured 60 (formula S\u00b2\u2212S/2 = 60)"),
            qPrintable(map.statsText()));
        // During playback it covers the updates so far, and says so instead of calling the run
        // too short; at the end it is the run's again.
        map.setCursorUpdate(40, 22);
        QVERIFY2(map.statsText().contains("\u2014 up to slot 22 (playback), mean"),
                 qPrintable(map.statsText()));
        QVERIFY(!map.statsText().contains("too short"));
        map.setCursorUpdate(40);
        QVERIFY2(map.statsText().contains("up to update 40 (playback)"),
                 qPrintable(map.statsText()));
        map.setCursorUpdate(-1);
        QVERIFY(!map.statsText().contains("playback"));
        QVERIFY2(
            map.statsText().startsWith("max delay measured 60 (formula S\u00b2\u2212S/2 = 60)"),
            qPrintable(map.statsText()));
        map.setDelays(table(ScheduleKind::FillDrain, 8), false);
        QVERIFY(!map.statsText().contains("formula"));
        QVERIFY(!map.statsText().contains("S\u00b2"));
        QVERIFY(std::isnan(map.formulaMax()));
    }
};

QTEST_MAIN(TestStalenessHeatmap)
#include "tst_staleness_heatmap.moc"
