// Exports: PNGs have the requested size and are not blank, SVGs are SVG, CSVs hold the data
// behind the chart.
#include <QChartView>
#include <QFile>
#include <QImage>
#include <QLineSeries>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "figure_strip.hpp"
#include "gantt_chart.hpp"
#include "loss_chart.hpp"
#include "main_window.hpp"
#include "staleness_heatmap.hpp"
#include "ui_test_support.hpp"

using namespace pipelens;
using namespace pipelens::ui;

namespace {

// Distinct colours in a grid of samples: a blank or single-colour image has one or two.
int distinctColours(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
    }
    return static_cast<int>(colours.size());
}

QStringList lines(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
}

}  // namespace

class TestExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::isolateSettings();
        window_ = new MainWindow;
        window_->resize(1500, 950);
        window_->show();
        QVERIFY(window_->waitForResults(60000));
    }
    void cleanupTestCase() { delete window_; }

    void windowPngHasTheRequestedSize_data() {
        QTest::addColumn<double>("scale");
        QTest::newRow("1x") << 1.0;
        QTest::newRow("1.5x") << 1.5;
        QTest::newRow("2x") << 2.0;
    }
    void windowPngHasTheRequestedSize() {
        QFETCH(double, scale);
        const QString path = dir_.filePath(QStringLiteral("window-%1.png").arg(scale));
        QString error;
        QVERIFY2(window_->exportWindow(path, scale, &error), qPrintable(error));
        const QImage image(path);
        QCOMPARE(image.size(), QSize(qRound(window_->width() * scale),
                                     qRound(window_->height() * scale)));
        QVERIFY(distinctColours(image) > 50);
    }

    void everyChartExportsPngSvgAndCsv() {
        QString error;
        struct Case {
            QString name;
            std::function<bool(const QString&, double, QString*)> png;
            std::function<bool(const QString&, QString*)> svg;
            std::function<bool(const QString&, QString*)> csv;
            QWidget* widget;
        };
        const QList<Case> cases = {
            {"loss", [&](const QString& p, double s, QString* e) { return window_->lossChart()->exportPng(p, s, e); },
             [&](const QString& p, QString* e) { return window_->lossChart()->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return window_->lossChart()->exportCsv(p, e); },
             window_->lossChart()->view()},
            {"figures", [&](const QString& p, double s, QString* e) { return window_->figureStrip()->exportPng(p, s, e); },
             [&](const QString& p, QString* e) { return window_->figureStrip()->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return window_->figureStrip()->exportCsv(p, e); },
             window_->figureStrip()},
            {"gantt", [&](const QString& p, double s, QString* e) { return window_->gantt()->exportPng(p, s, e); },
             [&](const QString& p, QString* e) { return window_->gantt()->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return window_->gantt()->exportCsv(p, e); }, window_->gantt()},
            {"heatmap", [&](const QString& p, double s, QString* e) { return window_->heatmap()->exportPng(p, s, e); },
             [&](const QString& p, QString* e) { return window_->heatmap()->exportSvg(p, e); },
             [&](const QString& p, QString* e) { return window_->heatmap()->exportCsv(p, e); },
             window_->heatmap()},
        };
        for (const Case& c : cases) {
            const QString png = dir_.filePath(c.name + ".png");
            QVERIFY2(c.png(png, 2.0, &error), qPrintable(c.name + ": " + error));
            const QImage image(png);
            QCOMPARE(image.size(), c.widget->size() * 2);
            QVERIFY2(distinctColours(image) > 8, qPrintable(c.name));
            const QString svg = dir_.filePath(c.name + ".svg");
            QVERIFY2(c.svg(svg, &error), qPrintable(c.name + ": " + error));
            QFile f(svg);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QVERIFY(f.readAll().contains("<svg"));
            const QString csv = dir_.filePath(c.name + ".csv");
            QVERIFY2(c.csv(csv, &error), qPrintable(c.name + ": " + error));
            QVERIFY(lines(csv).size() > 2);
        }
    }

    void theLossCsvHoldsEveryPointOfEveryMethod() {
        const QString csv = dir_.filePath("loss-data.csv");
        QVERIFY(window_->lossChart()->exportCsv(csv));
        const QStringList rows = lines(csv);
        size_t expected = 0;
        for (int i = 0; i < window_->lossChart()->methodSeries().size(); ++i) {
            expected += window_->lossChart()->methodData(i).size();
        }
        QCOMPARE(static_cast<size_t>(rows.size() - 1), expected);
        // The first data row is PipeDream's f(w0) - f* at slot 0.
        const SnapshotPtr s = window_->controller()->latest();
        const QStringList first = rows.at(1).split(',');
        QCOMPARE(first.at(first.size() - 2), QString("0"));
        QCOMPARE(first.last().toDouble(), s->result(0).initialObjective - s->result(0).optimum);
    }

    void aBadScaleOrPathIsRefused() {
        QString error;
        QVERIFY(!window_->exportWindow(dir_.filePath("x.png"), 0.0, &error));
        QVERIFY(error.contains("scale"));
        QVERIFY(!window_->exportWindow("/nonexistent-dir/x.png", 1.0, &error));
        QVERIFY(!error.isEmpty());
    }

private:
    MainWindow* window_ = nullptr;
    QTemporaryDir dir_;
};

QTEST_MAIN(TestExport)
#include "tst_export.moc"
