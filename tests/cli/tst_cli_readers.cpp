// pipelens-cli's input readers on hostile files (issue 28, "nothing crashes, nothing is lost"):
// each case is a reproducer the campaign found, driven through the real binary with a timeout,
// so a reader that blocks again fails here instead of hanging the suite.
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// pipelens-cli with a short time limit (a reader that blocks fails its test) and, when
// `memoryKb` > 0, a bounded address space (one that reads without end fails fast). Under
// AddressSanitizer (scripts/sanitize.sh) the binary reserves terabytes of shadow memory and
// cannot start with such a bound: there the time limit alone catches an endless read.
CliResult runReader(const QStringList& args, int timeoutMs = 20000, long memoryKb = 0) {
#if defined(__SANITIZE_ADDRESS__)
    memoryKb = 0;
#endif
    return runProgram(QString(PIPELENS_CLI_PATH), args,
                      RunSettings().timeout(timeoutMs).addressSpace(memoryKb));
}

json smallSweep() {
    return {{"experiment", smallConfig()}, {"axis", {{"name", "stages"}, {"values", {1, 2}}}}};
}

// A reader's refusal: expectRefused, and short (never a whole value) in PipeLens's own words.
void expectReaderRefused(const CliResult& r, const QStringList& fragments, int code = 1) {
    expectRefused(r, fragments, code);
    QVERIFY2(r.err.size() < 1000, qPrintable("a long message: " + r.err.left(500)));
    QVERIFY2(!r.err.contains("[json.exception"), qPrintable(r.err));
    QVERIFY2(!r.err.contains("filesystem error"), qPrintable(r.err));
    QVERIFY2(!r.err.contains("basic_filebuf"), qPrintable(r.err));
}

}  // namespace

class TstCliReaders : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    fs::path dir() const { return fs::path(tmp_.path().toStdString()); }
    QString path(const std::string& name) const {
        return QString::fromStdString((dir() / name).string());
    }
    QString file(const std::string& name, const std::string& text) const {
        writeFile(dir() / name, text);
        return path(name);
    }
    QString fifo(const std::string& name) const {
        fs::remove(dir() / name);
        if (::mkfifo((dir() / name).c_str(), 0600) != 0) qFatal("mkfifo failed");
        return path(name);
    }

  private slots:
    // A sweep file 60000 deep ended with SIGSEGV: its messages dumped the whole value.
    void deepSweepFileRefused() {
        const std::string deep = std::string(60000, '[') + std::string(60000, ']');
        expectReaderRefused(runReader({"sweep", file("deep.json", deep), "--out", path("o1")}),
                            {"sweep file", "deep.json", "64 deep"});
        const std::string inner = "{\"experiment\": " + deep + "}";
        expectReaderRefused(runReader({"sweep", file("deep2.json", inner), "--out", path("o2")}),
                            {"deep2.json", "64 deep"});
    }

    // "seeds": 1e999 leaked the JSON library's own message; a key given twice was taken.
    void sweepNumbersAndKeysChecked() {
        std::string text = smallSweep().dump();
        text.insert(text.size() - 1, ", \"seeds\": 1e999");
        expectReaderRefused(
            runReader({"sweep", file("big.json", text), "--out", path("o3")}),
            {"sweep file", "big.json", "has a number that is not allowed", "1e999"});
        expectReaderRefused(runReader({"sweep", file("dup.json", R"({"seeds": 1, "seeds": 2})"),
                                       "--out", path("o4")}),
                            {"key \"seeds\" appears twice"});
    }

    // A sweep error printed the whole value: a 6 MB line.
    void sweepErrorsNeverPrintAWholeValue() {
        json s = smallSweep();
        s["axis"]["values"] = json::array({std::string(6'000'000, 'x')});
        expectReaderRefused(runReader({"sweep", file("wide.json", s.dump()), "--out", path("o5")}),
                            {"axis.values[0]"});
        json n = smallSweep();
        n["name"] = json::array();
        for (int i = 0; i < 200000; ++i) n["name"].push_back(i);
        expectReaderRefused(runReader({"sweep", file("name.json", n.dump()), "--out", path("o6")}),
                            {"name = [...]"});
    }

    // Raw library errors for a sweep path: a folder gave "basic_filebuf::underflow", an empty
    // path "filesystem error: cannot make absolute path".
    void sweepPathProblemsSayWhy() {
        fs::create_directory(dir() / "folder");
        expectReaderRefused(runReader({"sweep", path("folder"), "--out", path("o7")}),
                            {"sweep file", "folder", "is a folder, not a file"});
        expectReaderRefused(runReader({"sweep", "", "--out", path("o8")}),
                            {"sweep file '' does not exist"});
    }

    // A FIFO as config, sweep file or data file blocked forever.
    void fifosRefused() {
        expectReaderRefused(
            runReader({"run", fifo("c.json"), "--out", path("o9")}),
            {"config file '" + path("c.json") + "' is a FIFO (named pipe), not a regular file"});
        expectReaderRefused(runReader({"sweep", fifo("s.json"), "--out", path("o10")}),
                            {"sweep file", "s.json", "is a FIFO (named pipe)"});
        json c = smallConfig();
        c["data"] = {{"source", "csv"}, {"x", fifo("d.csv").toStdString()}};
        const CliResult r = runReader({"run", file("csv.json", c.dump()), "--out", path("o11")});
        QVERIFY2(r.finished, qPrintable(r.err));
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("CSV file") && r.err.contains("is a FIFO (named pipe)"),
                 qPrintable(r.err.left(500)));
    }

    // /dev/zero as a config or a CSV file was read until memory ran out. The memory limit
    // makes the old behaviour fail fast here instead of exhausting the machine.
    void devicesRefused() {
        expectReaderRefused(runReader({"run", "/dev/zero", "--out", path("o12")}, 20000, 4'000'000),
                            {"config file '/dev/zero' is a character device, not a regular file"});
        json c = smallConfig();
        c["data"] = {{"source", "csv"}, {"x", "/dev/zero"}};
        const CliResult r =
            runReader({"run", file("zero.json", c.dump()), "--out", path("o13")}, 20000, 4'000'000);
        QVERIFY2(r.finished, qPrintable(r.err));
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("CSV file '/dev/zero' is a character device, not a regular file"),
                 qPrintable(r.err.left(500)));
    }

    // Control bytes in a path are escaped, as docs/reliability.md promises.
    void pathControlBytesEscaped() {
        const CliResult r = runReader({"sweep", path("a\x1b[2Jb.json"), "--out", path("o14")});
        expectReaderRefused(r, {"a\\x1b[2Jb.json", "does not exist"});
        QVERIFY(!r.err.contains(QChar(0x1b)));
        const CliResult c = runReader({"run", path("c\x07.json"), "--out", path("o15")});
        expectReaderRefused(c, {"c\\x07.json"});
    }

    // A damaged points/point-NNNN.json crashed `sweep --resume`.
    void damagedPointFileRefusedOnResume() {
        const QString spec = file("sweep.json", smallSweep().dump());
        const QString out = path("res");
        const CliResult first = runReader({"sweep", spec, "--out", out, "--quiet"}, 120000);
        QVERIFY2(first.finished && first.exitCode == 0, qPrintable(first.err.left(500)));
        const fs::path point = dir() / "res" / "points" / "point-0000.json";
        QVERIFY(fs::exists(point));
        writeFile(point, std::string(60000, '[') + std::string(60000, ']'));
        expectReaderRefused(
            runReader({"sweep", spec, "--out", out, "--resume", "--quiet"}),
            {"--resume", "point-0000.json", "cannot be read back", "64 deep", "remove it"}, 2);
        json bad = json::parse(R"({"index": 0, "value": 1, "seeds": 1, "f_star": 0})");
        bad["methods"] = json::array({{{"label", std::string(3'000'000, 'q')}, {"method", 7}}});
        writeFile(point, bad.dump());
        expectReaderRefused(runReader({"sweep", spec, "--out", out, "--resume", "--quiet"}),
                            {"point-0000.json", "cannot be read back"}, 2);
        // The stored sweep.json is read the same way.
        fs::remove(point);
        writeFile(dir() / "res" / "sweep.json", std::string(60000, '['));
        expectReaderRefused(runReader({"sweep", spec, "--out", out, "--resume", "--quiet"}),
                            {"--resume", "sweep.json", "64 deep"}, 2);
        fs::remove(dir() / "res" / "sweep.json");
        ::mkfifo((dir() / "res" / "sweep.json").c_str(), 0600);
        expectReaderRefused(runReader({"sweep", spec, "--out", out, "--resume", "--quiet"}),
                            {"sweep.json", "is a FIFO (named pipe)"}, 2);
    }
};

QTEST_GUILESS_MAIN(TstCliReaders)
#include "tst_cli_readers.moc"
