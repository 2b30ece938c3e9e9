// Every export of the app checks its target and its size before drawing (issue 28): a FIFO, a
// device node or a folder is never replaced by a regular file, a link to a file is written
// through, and a PNG above 16384 pixels per side or 2^28 pixels is refused with the numbers.
#include <QLabel>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "charts/chart_support.hpp"
#include "charts/widget_export.hpp"

using namespace pipelens::ui;
namespace fs = std::filesystem;

namespace {

bool isFifo(const QString& path) {
    return fs::is_fifo(fs::symlink_status(path.toStdString()));
}

}  // namespace

class TestScreenshotTarget : public QObject {
    Q_OBJECT

  private slots:
    void exportsRefuseWhatIsNotAFile() {
        QTemporaryDir tmp;
        const QString fifo = tmp.filePath("out.png");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QLabel widget("PipeLens");
        widget.resize(200, 100);
        const chart::PaintFunction paint = [](QPainter&) {};
        QString error;
        QVERIFY(!exportWidgetPng(&widget, fifo, 1.0, &error));
        QVERIFY2(error.contains(fifo) && error.contains("a FIFO (named pipe)"), qPrintable(error));
        error.clear();
        QVERIFY(!exportWidgetSvg(&widget, fifo, &error));
        QVERIFY2(error.contains("a FIFO (named pipe)"), qPrintable(error));
        error.clear();
        QVERIFY(!writeTextAtomically(fifo, "a,b\n", &error));
        QVERIFY2(error.contains("a FIFO (named pipe)"), qPrintable(error));
        error.clear();
        QVERIFY(!chart::exportPngImage(fifo, QSize(10, 10), 1.0, paint, &error));
        QVERIFY2(error.contains("a FIFO (named pipe)"), qPrintable(error));
        error.clear();
        QVERIFY(!chart::writeTextFileAtomically("/dev/null", "x", &error));
        QVERIFY2(error.contains("/dev/null") && error.contains("a character device"),
                 qPrintable(error));
        error.clear();
        QVERIFY(!chart::exportSvgImage(tmp.path(), QSize(10, 10), "t", paint, &error));
        QVERIFY2(error.contains("a folder"), qPrintable(error));
        QVERIFY(isFifo(fifo));
        QVERIFY(fs::is_character_file("/dev/null"));
        // A link to a regular file: the file is replaced, the link kept.
        std::ofstream(tmp.filePath("real.csv").toStdString()) << "old";
        fs::create_symlink("real.csv", tmp.filePath("link.csv").toStdString());
        QVERIFY2(writeTextAtomically(tmp.filePath("link.csv"), "new\n", &error), qPrintable(error));
        QVERIFY(fs::is_symlink(tmp.filePath("link.csv").toStdString()));
        QFile real(tmp.filePath("real.csv"));
        QVERIFY(real.open(QIODevice::ReadOnly));
        QCOMPARE(real.readAll(), QByteArray("new\n"));
    }

    void hugeImagesRefusedBeforeDrawing() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("huge.png");
        bool painted = false;
        const chart::PaintFunction paint = [&](QPainter&) { painted = true; };
        QString error;
        QVERIFY(!chart::exportPngImage(out, QSize(10000, 10000), 8.0, paint, &error));
        QVERIFY2(error.contains("80000 x 80000") && error.contains("16384") &&
                     error.contains("268435456"),
                 qPrintable(error));
        QVERIFY(!painted);
        QVERIFY(!QFile::exists(out));
        QLabel widget("PipeLens");
        widget.resize(9000, 9000);  // 2^28 pixels is the limit: 8.1e7 x 4 is over it
        error.clear();
        QVERIFY(!exportWidgetPng(&widget, out, 2.0, &error));
        QVERIFY2(error.contains("18000 x 18000"), qPrintable(error));
        QVERIFY(chart::imageSizeProblem(16384, 16384).isEmpty());
        QVERIFY(!chart::imageSizeProblem(16385, 1).isEmpty());
        QVERIFY(!chart::imageSizeProblem(16384, 16385).isEmpty());
    }
};

QTEST_MAIN(TestScreenshotTarget)
#include "tst_screenshot_target.moc"
