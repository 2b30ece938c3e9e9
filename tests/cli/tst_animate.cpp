// `pipelens-cli animate` through the real binary (it execs pipelens-reproduce, which draws with
// the app's charts offscreen): frames written, and each bad value refused in one line naming the
// option, the value and what is allowed, with nothing written.
#include <QDir>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

#include "cli_runner.hpp"

class TestAnimate : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;
    QString config_;

    QString path(const QString& name) const { return dir_.filePath(name); }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        config_ = path("small.json");
        writeFile(config_.toStdString(), smallConfig().dump());
    }

    void writesOneFramePerSlot() {
        const CliResult r = runCli({"animate", config_, "--out", path("frames") + "/", "--slots",
                                    "1:6", "--size", "320x180", "--panels", "all"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith("animation written to " + path("frames") + ": 5 frames"),
                 qPrintable(r.out));
        const QStringList pngs = QDir(path("frames")).entryList({"*.png"}, QDir::Files);
        QCOMPARE(pngs.size(), 5);
        QCOMPARE(QImage(path("frames/frame_00004.png")).size(), QSize(320, 180));
    }

    void writesAGifQuietly() {
        const CliResult r = runCli({"animate", config_, "--out", path("small.gif"), "--fps", "20",
                                    "--size", "320x180", "--quiet"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
        QVERIFY(r.err.isEmpty());
        QVERIFY(readFile(path("small.gif").toStdString()).rfind("GIF89a", 0) == 0);
    }

    void refusesAnUnknownExtension() {
        expectRefused(runCli({"animate", config_, "--out", path("film.avi")}),
                      {"pipelens-cli: --out = \"" + path("film.avi") +
                       "\" is not allowed: .gif, .mp4, or a folder path ending in /"});
        QVERIFY(!QFile::exists(path("film.avi")));
    }

    void refusesBadSlotsFpsAndSize() {
        expectRefused(runCli({"animate", config_, "--out", path("a.gif"), "--slots", "0:100000"}),
                      {"--slots = \"0:100000\" is not allowed: A:B with 0 <= A < B <= "});
        expectRefused(runCli({"animate", config_, "--out", path("a.gif"), "--slots", "4:2"}),
                      {"--slots = \"4:2\" is not allowed: A:B"});
        expectRefused(runCli({"animate", config_, "--out", path("a.gif"), "--fps", "61"}),
                      {"--fps = \"61\" is not allowed: frames per second, a whole number from 1 "
                       "to 60"});
        expectRefused(runCli({"animate", config_, "--out", path("a.mp4"), "--size", "641x360"}),
                      {"--size = \"641x360\" is not allowed: ", "both even for .mp4"});
        expectRefused(runCli({"animate", config_, "--out", path("a.gif"), "--panels", "heatmap"}),
                      {"--panels = \"heatmap\" is not allowed: one of gantt, gantt+loss, all"});
        expectRefused(runCli({"animate", config_, "--out", path("a.gif"), "--method", "rpd"}),
                      {"--method = \"rpd\" is not allowed: "});
        expectRefused(runCli({"animate", config_}), {"--out is missing"});
        QVERIFY(!QFile::exists(path("a.gif")));
        QVERIFY(!QFile::exists(path("a.mp4")));
    }

    void refusesAFolderItDidNotWrite() {
        QDir(dir_.path()).mkdir("notes");
        writeFile(path("notes/keep.txt").toStdString(), "mine");
        expectRefused(runCli({"animate", config_, "--out", path("notes") + "/"}),
                      {"is not allowed: a new or empty folder, or one an animation export wrote"});
        QCOMPARE(readFile(path("notes/keep.txt").toStdString()), std::string("mine"));
    }

    void describesItself() {
        const CliResult r = runCli({"animate", "--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("Usage: pipelens-cli animate CONFIG.json --out"));
        QVERIFY(runCli({"help"}).out.contains("animate "));
    }
};

QTEST_MAIN(TestAnimate)
#include "tst_animate.moc"
