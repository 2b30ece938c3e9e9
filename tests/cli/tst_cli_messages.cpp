// Nothing lost and every message true (issue 28), through the real binary: a method label that
// holds a quote, a comma, a newline and a leading '=' comes back cell for cell from every CSV a
// run writes; refusals state the range really checked and the key the user wrote; the LocalSGD
// warning does not overflow; a sweep that stops (a failed point, Ctrl-C) says how to continue it.
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/cli_runner.hpp"
#include "csv_strict_reader.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kLabelPd = "=HYPERLINK(\"x\"),\"pd\nrun";
const std::string kLabelRpd = "rpd, \"quoted\"\nsecond line";

}  // namespace

class TestCliMessages : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    fs::path dir() const { return fs::path(tmp_.path().toStdString()); }
    QString file(const std::string& name, const std::string& text) const {
        writeFile(dir() / name, text);
        return QString::fromStdString((dir() / name).string());
    }
    QString path(const std::string& name) const {
        return QString::fromStdString((dir() / name).string());
    }
    CliResult runConfig(const std::string& name, const json& j) {
        return runCli({"run", file(name + ".json", j.dump()), "--out", path(name), "--quiet"});
    }

  private slots:
    // Labels were written between quotes without doubling inner quotes, so one '"', ',' or
    // newline shifted every later cell; a leading '=' ran as a spreadsheet formula.
    void labelsReadBackFromEveryCsv() {
        json j = smallConfig();
        j["methods"] = json::array(
            {{{"method", "pd"}, {"label", kLabelPd}, {"step_size", {{"grid", {-3, -2}}}}},
             {{"method", "rpd"}, {"label", kLabelRpd}, {"step_size", 0.1}}});
        j["sampling"] = {{"grad_norm_every", 1}};
        const CliResult r = runConfig("labels", j);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const std::set<std::string> labels = {"'" + kLabelPd, kLabelRpd};
        std::set<std::string> files;
        for (const auto& e : fs::directory_iterator(dir() / "labels")) {
            if (e.path().extension() != ".csv") continue;
            const std::string name = e.path().filename().string();
            files.insert(name);
            const auto rows = csvtest::readStrict(readFile(e.path()));
            QVERIFY2(rows, qPrintable(QString::fromStdString(name) + " is not strict CSV"));
            QVERIFY(!rows->empty());
            const auto& header = (*rows)[0];
            // A column per method, or a row per method (its label first).
            const bool wide = header[0] != "method" && header[0] != "label";
            for (std::size_t i = 0; i < rows->size(); ++i) {
                const auto& row = (*rows)[i];
                QVERIFY2(row.size() == header.size(), qPrintable(QString::fromStdString(name)));
                if (wide && i == 0) {
                    for (std::size_t c = 1; c < row.size(); ++c) QVERIFY(labels.count(row[c]));
                } else if (!wide && i > 0) {
                    QVERIFY2(labels.count(row[0]),
                             qPrintable(QString::fromStdString(name + ": " + row[0])));
                }
            }
        }
        for (const char* f :
             {"objective_per_slot.csv", "objective_per_update.csv", "gap_per_update.csv",
              "grad_norm.csv", "theorem.csv", "sweep.csv", "timeline_0.csv", "delays_0.csv"}) {
            QVERIFY2(files.count(f), f);
        }
    }

    // Each was refused for being too large with a message giving only the lower bound.
    void batchSizeStatesTheRealRange() {
        json j = smallConfig();
        j["batch_size"] = 1e10;
        expectRefused(runConfig("batch", j),
                      {"batch_size = 10000000000.0 is not allowed: an integer in [1, 1000000000]"});
    }

    void seedStatesTheRealRange() {
        std::string text = smallConfig().dump();
        text.replace(text.find('{'), 1, "{\"seed\": 18446744073709551615, ");
        expectRefused(runCli({"run", file("seed.json", text), "--out", path("seed")}),
                      {"seed = 18446744073709551615 is not allowed: an integer in [0, "
                       "1000000000000]"});
    }

    void localStepsStatesTheRealRange() {
        json j = smallConfig();
        j["methods"] = json::array(
            {{{"method", "localsgd"}, {"step_size", 0.1}, {"local_steps", 1073741824}}});
        expectRefused(runConfig("steps", j),
                      {"local_steps = 1073741824 is not allowed: an integer in [1, 1000000000]"});
    }

    // mu is derived from condition_number: the message named "synthetic.mu", a key nobody wrote.
    void derivedMuReportedAsTheUsersKey() {
        json j = smallConfig();
        j["data"] = {
            {"kind", "tridiagonal"}, {"rows", 20}, {"dim", 8}, {"condition_number", 1e300}};
        const CliResult r = runConfig("kappa", j);
        expectRefused(r, {"data.condition_number = 1e+300 is not allowed", "dim = 8"});
        QVERIFY2(!r.err.contains("synthetic.mu"), qPrintable(r.err));
    }

    // 2SH + 2(S - 1) was computed in int: S = 2, H = 10^9 printed -294967294 slots.
    void localSgdWarningDoesNotOverflow() {
        json j = smallConfig();
        j["methods"] = json::array(
            {{{"method", "localsgd"}, {"step_size", 0.1}, {"local_steps", 1000000000}}});
        const CliResult r = runConfig("never", j);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("2SH + 2(S − 1) = 4000000002 slots"), qPrintable(r.err));
        QVERIFY2(!r.err.contains("-294967294"), qPrintable(r.err));
    }

    // A sweep with a failed point said nothing about --resume.
    void failedSweepSaysHowToResume() {
        json e = smallConfig();
        e["data"] = {{"kind", "tridiagonal"}, {"rows", 20}, {"dim", 8}};
        const json sweep = {{"name", "fails"},
                            {"experiment", e},
                            {"axis", {{"name", "rows"}, {"values", {20, 5}}}},
                            {"seeds", 1}};
        const QString spec = file("sweep.json", sweep.dump());
        const QString out = path("sweep-out");
        const CliResult r = runCli({"sweep", spec, "--out", out, "--quiet"});
        QVERIFY2(!r.crashed && r.exitCode != 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("pipelens-cli sweep " + spec + " --out " + out + " --resume"),
                 qPrintable(r.err));
    }

    // Ctrl-C said "run again with --resume" without the command; it now names it.
    void interruptedSweepSaysHowToResume() {
        json e = smallConfig();
        e["data"] = {{"kind", "random"}, {"rows", 2000}, {"dim", 64}, {"seed", 3}};
        e["stages"] = 4;
        e["batch_size"] = 10;
        e["budget"] = {{"epochs", 12}};
        e["methods"] = json::array({{{"method", "pd"}, {"step_size", {{"grid", {-6, -2}}}}}});
        json values = json::array();
        for (int v = 2; v < 18; ++v) values.push_back(v);
        const json sweep = {{"name", "long"},
                            {"experiment", e},
                            {"axis", {{"name", "stages"}, {"values", values}}},
                            {"seeds", 2}};
        const QString spec = file("long.json", sweep.dump());
        const QString out = path("long-out");
        QProcess p;
        p.start(QString(PIPELENS_CLI_PATH), {"sweep", spec, "--out", out, "--threads", "1"});
        QVERIFY(p.waitForStarted(10000));
        QByteArray err;
        QElapsedTimer clock;
        clock.start();
        while (!err.contains("points 1/") && clock.elapsed() < 60000) {
            p.waitForReadyRead(1000);
            err += p.readAllStandardError();
        }
        QVERIFY2(err.contains("points 1/"), err.constData());
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(60000));
        err += p.readAllStandardError();
        QCOMPARE(p.exitCode(), 130);
        QVERIFY2(err.contains(("to continue it run: pipelens-cli sweep " + spec + " --out " + out +
                               " --resume")
                                  .toUtf8()),
                 err.constData());
    }

    // A config name or label holding ESC]0;...BEL retitled the terminal through the run's
    // summary on standard output; it is escaped there as in every message.
    void configNameAndLabelsEscapedInTheSummary() {
        json c = smallConfig();
        c["name"] = "x\x1b]0;pwned\x07";
        c["methods"][0]["label"] = "pd\x1b[2J";
        const CliResult r = runCli({"run", file("esc.json", c.dump()), "--out", path("esc")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.out.contains(QChar(0x1b)) && !r.out.contains(QChar(0x07)), qPrintable(r.out));
        QVERIFY2(r.out.contains("x\\x1b]0;pwned\\x07") && r.out.contains("pd\\x1b[2J"),
                 qPrintable(r.out));
        QVERIFY(!r.rawErr.contains('\x1b'));
    }
};

QTEST_GUILESS_MAIN(TestCliMessages)
#include "tst_cli_messages.moc"
