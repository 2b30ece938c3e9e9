#pragma once
// Helpers shared by the workbench's Qt tests: isolated settings, waiting for a run, what an
// empty chart draws.
#include <QColor>
#include <QCoreApplication>
#include <QFile>
#include <QFontMetrics>
#include <QImage>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWidget>
#include <QtGlobal>
#include <algorithm>

#include "charts/range_chart.hpp"
#include "controllers/experiment_controller.hpp"

namespace pipelens::ui::test {

// A wait's upper bound in ms, times PIPELENS_TEST_TIME_SCALE (an integer >= 1, default 1):
// scripts/sanitize.sh sets it, since ASan and UBSan slow the runs several times over. Only how
// long a test may wait changes, never what it checks.
inline int timeout(int ms) {
    const int scale = std::max(1, qEnvironmentVariableIntValue("PIPELENS_TEST_TIME_SCALE"));
    return ms * scale;
}

// Settings and caches go to a test location, never the person's own.
inline void isolateSettings() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("PipeLensTests");
    QCoreApplication::setApplicationName("pipelens-ui-tests");
}

// The chart's SVG export as text (empty, and a failed check, when the export fails).
inline QString exportedSvg(const RangeChart& chart) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("chart.svg"));
    QString error;
    if (!chart.exportSvg(path, &error)) {
        QTest::qFail(qPrintable(QStringLiteral("export failed: ") + error), __FILE__, __LINE__);
        return {};
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}

// Waits until the controller has delivered the results of its current generation.
inline bool waitForCurrentResults(ExperimentController& c, int timeoutMs = 60000) {
    return QTest::qWaitFor(
        [&] { return !c.running() && c.latest() && c.latest()->generation == c.generation(); },
        timeout(timeoutMs));
}

// Renders `widget` into a fresh image and checks that it shows `text` centred and nothing else:
// ink (non-white pixels) inside the text's box, white everywhere outside it. Returns an empty
// string when it does, else what is wrong.
inline QString checkEmptyState(QWidget& widget, const QString& text) {
    QImage image(widget.size(), QImage::Format_ARGB32);
    image.fill(Qt::black);  // anything not painted stays black, and counts as stray ink
    widget.render(&image);
    const QRect box = QFontMetrics(widget.font())
                          .boundingRect(QRect(QPoint(0, 0), widget.size()),
                                        Qt::AlignCenter | Qt::TextWordWrap, text)
                          .adjusted(-2, -2, 2, 2);
    int inked = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            const bool white = image.pixel(x, y) == qRgb(255, 255, 255);
            if (box.contains(x, y)) {
                inked += white ? 0 : 1;
            } else if (!white) {
                return QStringLiteral("pixel (%1, %2) outside the message is not white")
                    .arg(x)
                    .arg(y);
            }
        }
    }
    // A line of text inks a good share of its box.
    if (inked < box.width() * box.height() / 20)
        return QStringLiteral(
                   "the message \"%1\" is not drawn (%2 inked pixels in its %3 x %4 box)")
            .arg(text)
            .arg(inked)
            .arg(box.width())
            .arg(box.height());
    return {};
}

}  // namespace pipelens::ui::test
