// `pipelens-cli run --figures` through the real binary: the figures are real drawings of the
// run, the Gantt chart opens on its start-up, index.html shows them with the summary table, with
// relative links only, and nothing of the kind is written without --figures.
#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/cli_runner.hpp"

namespace {

// The default run has two pipelines (PD and LocalSGD): compare.png stacks them.
const QStringList kFigures{"gantt.png", "gantt-all.png", "compare.png", "heatmap.png",
                           "loss.png",  "figures.png",   "window.png"};

QString readText(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll());
}

// Colours in a picture, up to `enough`: a blank or one-colour image is no drawing.
int distinctColours(const QImage& image, int enough) {
    std::set<QRgb> seen;
    for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) {
            seen.insert(image.pixel(x, y));
            if (static_cast<int>(seen.size()) >= enough) return enough;
        }
    }
    return static_cast<int>(seen.size());
}

}  // namespace

class TestRunFigures : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString env_;

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        env_ = "XDG_RUNTIME_DIR=" + dir_.path();
    }

    void defaultRunDrawsEveryFigure() {
        const QString out = dir_.filePath("default");
        const CliResult r = runCli({"run", "--default", "--figures", "--out", out}, {env_});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        // The offscreen platform's notes are not a person's business.
        QVERIFY2(!r.err.contains("propagateSizeHints"), qPrintable(r.err));
        for (const QString& f : kFigures) {
            const QImage image(out + "/" + f);
            QVERIFY2(!image.isNull(), qPrintable(f));
            QVERIFY2(image.width() >= 600 && image.height() >= 250, qPrintable(f));
            QVERIFY2(distinctColours(image, 12) >= 12, qPrintable(f + " looks blank"));
        }
        // The run's data are written as without --figures.
        QVERIFY(QFile::exists(out + "/summary.json"));
        QVERIFY(QFile::exists(out + "/timeline_0.csv"));
    }

    void indexShowsFiguresAndSummaryWithRelativeLinks() {
        const QString out = dir_.filePath("default");
        const QString html = readText(out + "/index.html");
        QVERIFY(!html.isEmpty());
        for (const QString& f : kFigures) {
            QVERIFY2(html.contains("<img src=\"" + f + "\""), qPrintable(f));
        }
        QVERIFY(html.contains("<a href=\"summary.json\">"));
        QVERIFY(html.contains("<a href=\"timeline_0.csv\">"));
        // One row per method in the summary table, named as summary.json names it.
        const auto summary = nlohmann::json::parse(readText(out + "/summary.json").toStdString());
        for (const auto& m : summary.at("methods")) {
            const QString label = QString::fromStdString(m.at("label").get<std::string>());
            QVERIFY2(html.contains("<td>" + label + "</td>"), qPrintable(label));
        }
        // Opens from the file system, offline: no network and no absolute path.
        QVERIFY(!html.contains("http://") && !html.contains("https://"));
        QVERIFY(!html.contains("src=\"/") && !html.contains("href=\"/"));
        QVERIFY(!html.contains(dir_.path()));
        // The Gantt chart's opening view is named as what it is: the start-up of S = 8.
        QVERIFY2(html.contains("the first 24 slots of 614"), qPrintable(html.left(3000)));
        // The comparison's caption gives each pipeline's bubble and peak, and names RPD as
        // having no timeline.
        const auto& methods = summary.at("methods");
        for (const auto& m : methods) {
            const QString label = QString::fromStdString(m.at("label").get<std::string>());
            if (m.at("method") == "rpd") {
                QVERIFY2(html.contains(label + " has no pipeline timeline"), qPrintable(label));
                continue;
            }
            const double bubble = m.at("bubble_fraction").get<double>();
            QVERIFY2(
                html.contains(
                    QStringLiteral("%1: bubble %2%").arg(label).arg(bubble * 100.0, 0, 'f', 1)),
                qPrintable(label));
        }
    }

    // gantt.png shows the start-up (cells wide enough to be numbered), gantt-all.png the whole
    // run squeezed: the first has far wider forward cells.
    void ganttOpensOnTheStartUp() {
        const QString out = dir_.filePath("default");
        const QImage start(out + "/gantt.png");
        const QImage all(out + "/gantt-all.png");
        QCOMPARE(start.size(), all.size());
        // Longest run of one colour along a row through the first stage's cells.
        const auto longestRun = [](const QImage& image) {
            int best = 0;
            for (int y = 0; y < image.height(); y += 2) {
                int run = 1;
                for (int x = 1; x < image.width(); ++x) {
                    run = image.pixel(x, y) == image.pixel(x - 1, y) ? run + 1 : 1;
                    // The forward fill, sky blue (86, 180, 233).
                    const QRgb c = image.pixel(x, y);
                    if (std::abs(qRed(c) - 86) < 12 && std::abs(qGreen(c) - 180) < 12 &&
                        std::abs(qBlue(c) - 233) < 12)
                        best = std::max(best, run);
                }
            }
            return best;
        };
        const int startRun = longestRun(start);
        const int allRun = longestRun(all);
        QVERIFY2(startRun >= 3 * allRun, qPrintable(QString("%1 vs %2").arg(startRun).arg(allRun)));
    }

    // A run without a timeline (RPD alone: it has no slots of its own) has no Gantt chart: it
    // is left out of the folder and the page, not drawn empty. A name with markup is escaped.
    void noPipelineNoGanttAndEscapedName() {
        nlohmann::json config = smallConfig();
        config["name"] = "<b>mine</b> & co";
        config["methods"] = nlohmann::json::array({{{"method", "rpd"}, {"step_size", 0.1}}});
        const std::filesystem::path file = dir_.filePath("rpd.json").toStdString();
        writeFile(file, config.dump());
        const QString out = dir_.filePath("rpd");
        const CliResult r = runCli(
            {"run", QString::fromStdString(file.string()), "--figures", "--out", out}, {env_});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(!QFile::exists(out + "/gantt.png"));
        QVERIFY(!QFile::exists(out + "/gantt-all.png"));
        QVERIFY(!QFile::exists(out + "/compare.png"));  // nothing to compare
        QVERIFY(QFile::exists(out + "/loss.png"));
        const QString html = readText(out + "/index.html");
        QVERIFY(!html.contains("gantt.png"));
        QVERIFY(html.contains("&lt;b&gt;mine&lt;/b&gt; &amp; co"));
        QVERIFY(!html.contains("<b>mine</b>"));
    }

    void figuresAreOffByDefault() {
        const QString out = dir_.filePath("plain");
        const CliResult r = runCli({"run", "--default", "--out", out, "--quiet"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(out + "/summary.json"));
        QVERIFY(!QFile::exists(out + "/index.html"));
        QVERIFY(!QFile::exists(out + "/gantt.png"));
    }
};

QTEST_GUILESS_MAIN(TestRunFigures)
#include "tst_run_figures.moc"
