// pipelens-cli, driven as a user would: the real binary through QProcess. Checks the output
// formats against the golden cases and the closed forms, the help texts, the exit codes and the
// one-line error messages, and runs every config in examples/.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "experiment/config/config.hpp"
#include "folder_snapshot.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct CliResult {
    int exitCode = -1;
    QString out;
    QString err;
};

CliResult runCli(const QStringList& args, int timeoutMs = 60000) {
    QProcess p;
    p.start(QString(PIPELENS_CLI_PATH), args);
    CliResult r;
    if (!p.waitForStarted(10000)) {
        r.err = "could not start " + QString(PIPELENS_CLI_PATH);
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out: pipelens-cli " + args.join(' ');
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QString readFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll());
}

void writeFile(const QString& path, const std::string& text) {
    std::ofstream out(path.toStdString(), std::ios::binary);
    out << text;
}

// Entries of `dir` other than those named in `keep`.
QStringList strayEntries(const QString& dir, const QStringList& keep) {
    QStringList out;
    for (const QString& e : QDir(dir).entryList(QDir::AllEntries | QDir::NoDotAndDotDot)) {
        if (!keep.contains(e)) out << e;
    }
    return out;
}

// A small, fast experiment on the CPU engine (no notices on stderr).
json smallConfig() {
    return json::parse(R"({
        "name": "cli-small",
        "backend": "cpu",
        "stages": 4,
        "batch_size": 10,
        "data": {"kind": "random", "rows": 60, "dim": 8, "seed": 2},
        "budget": {"epochs": 2},
        "methods": [
            {"method": "pd", "step_size": 0.05},
            {"method": "rpd", "step_size": 0.05, "delta": 6},
            {"method": "localsgd", "step_size": 0.05, "local_steps": 2}
        ]
    })");
}

// The failure contract: a non-zero exit, exactly one line on stderr that contains every
// fragment, and nothing on stdout.
void expectFailure(const CliResult& r, const QStringList& fragments) {
    QVERIFY2(r.exitCode > 0, qPrintable(QString("exit %1, stderr: %2").arg(r.exitCode).arg(r.err)));
    const QStringList errLines = r.err.split('\n', Qt::SkipEmptyParts);
    QVERIFY2(errLines.size() == 1, qPrintable("stderr is not one line:\n" + r.err));
    for (const QString& f : fragments) {
        QVERIFY2(errLines[0].contains(f), qPrintable("\"" + f + "\" missing from: " + errLines[0]));
    }
    QVERIFY2(r.out.isEmpty(), qPrintable("stdout: " + r.out));
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
  private slots:
    void scheduleCsvEqualsGolden_data() {
        QTest::addColumn<QString>("name");
        const QDir golden(PIPELENS_GOLDEN_DIR);
        for (const QString& d : golden.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            if (QFile::exists(golden.filePath(d + "/timeline.csv")))
                QTest::newRow(qPrintable(d)) << d;
        }
    }
    void scheduleCsvEqualsGolden() {
        QFETCH(QString, name);
        const QString dir = QString(PIPELENS_GOLDEN_DIR) + "/" + name;
        const json c = json::parse(readFile(dir + "/case.json").toStdString());
        QStringList args{"schedule",
                         "--kind",
                         QString::fromStdString(c["method"].get<std::string>()),
                         "--stages",
                         QString::number(c["stages"].get<int>()),
                         "--microbatches",
                         QString::number(c["microbatches"].get<int>())};
        if (c.contains("noam")) args << "--noam" << QString::number(c["noam"].get<int>());
        if (c.contains("replicas"))
            args << "--replicas" << QString::number(c["replicas"].get<int>());
        if (c.contains("local_steps")) {
            args << "--local-steps" << QString::number(c["local_steps"].get<int>());
        }
        const CliResult r = runCli(args);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
        QCOMPARE(r.out, readFile(dir + "/timeline.csv"));
    }

    void scheduleArtAndSummary() {
        const CliResult r =
            runCli({"schedule", "--kind", "pd", "--stages", "4", "--microbatches", "6", "--art"});
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QStringList rows;
        for (const QString& l : lines) {
            if (l.startsWith("stage ")) rows << l;
        }
        QCOMPARE(rows.size(), 4);
        QVERIFY(rows[0].contains("F0") && rows[0].contains("B5"));
        QVERIFY(!r.out.contains("slot,stage"));
        const CliResult s = runCli({"schedule", "--kind", "localsgd", "--stages", "4",
                                    "--microbatches", "16", "--local-steps", "2", "--summary"});
        QCOMPARE(s.exitCode, 0);
        // Two rounds of 2 S H + 2 (S - 1) = 22 slots.
        QVERIFY2(s.out.contains("slots: 44"), qPrintable(s.out));
        QVERIFY2(s.out.contains("averaging_slots: 21 43"), qPrintable(s.out));
        const CliResult e = runCli({"schedule", "--kind", "pd", "--stages", "2", "--microbatches",
                                    "1", "--backward-slots", "2", "--end-slot"});
        QCOMPARE(e.exitCode, 0);
        QCOMPARE(e.out, QString("slot,stage,op,microbatch,end_slot\n0,0,F,0,0\n1,1,F,0,1\n"
                                "2,1,B,0,3\n4,0,B,0,5\n"));
    }

    // The flushing kinds print PyTorch's schedule CSV of one flush: 1F1B at S = 4, M = 8 is
    // 2(M + S - 1) = 22 steps on 4 rows, 2 S M actions; --json and --summary give the closed
    // forms; op costs change the timing only.
    void scheduleFlushingKinds() {
        const CliResult r =
            runCli({"schedule", "--kind", "1f1b", "--stages", "4", "--microbatches", "8"});
        QCOMPARE(r.exitCode, 0);
        const QStringList rows = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 4);
        int actions = 0;
        for (const QString& row : rows) {
            const QStringList cells = row.split(',');
            QCOMPARE(cells.size(), 22);
            for (const QString& c : cells) actions += c.isEmpty() ? 0 : 1;
        }
        QCOMPARE(actions, 2 * 4 * 8);
        QVERIFY(rows[0].startsWith("0F0,0F1,0F2,0F3,,,,0B0,0F4,0B1"));
        const CliResult j = runCli({"schedule", "--kind", "interleaved", "--stages", "4",
                                    "--microbatches", "8", "--virtual-stages", "2", "--json"});
        QCOMPARE(j.exitCode, 0);
        const json summary = json::parse(j.out.toStdString());
        QCOMPARE(summary.at("ranks").get<int>(), 4);
        QCOMPARE(summary.at("stages").get<int>(), 8);
        QCOMPARE(summary.at("length_slots").get<int>(), 2 * (2 * 8 + 4 - 1));
        QVERIFY(std::abs(summary.at("bubble_fraction").get<double>() - 3.0 / 19.0) < 1e-12);
        QCOMPARE(summary.at("stage_rank"), json({0, 1, 2, 3, 0, 1, 2, 3}));
        QCOMPARE(summary.at("rank_stages").at(1), json({1, 5}));
        // ZB-H1 against 1F1B whose full backward costs I + W = 2: a third of the bubble.
        const CliResult zb = runCli(
            {"schedule", "--kind", "zb-h1", "--stages", "4", "--microbatches", "8", "--json"});
        const CliResult one = runCli({"schedule", "--kind", "1f1b", "--stages", "4",
                                      "--microbatches", "8", "--backward-slots", "2", "--json"});
        QCOMPARE(zb.exitCode, 0);
        QCOMPARE(one.exitCode, 0);
        const json z = json::parse(zb.out.toStdString());
        const json o = json::parse(one.out.toStdString());
        QCOMPARE(z.at("length_slots").get<int>(), 3 * 8 + 4 - 1);
        QCOMPARE(o.at("with_costs").at("length_slots").get<int>(), 3 * 8 + 3 * (4 - 1));
        QCOMPARE(z.at("split_backward").get<bool>(), true);
        expectFailure(runCli({"schedule", "--kind", "interleaved", "--stages", "4",
                              "--microbatches", "10", "--virtual-stages", "3"}),
                      {"virtual_stages = 3", "multiple of", "10"});
        expectFailure(runCli({"schedule", "--kind", "1f1b", "--stages", "4", "--microbatches", "8",
                              "--latency-slots", "1"}),
                      {"--latency-slots", "1f1b"});
        expectFailure(runCli({"schedule", "--kind", "1f1b", "--stages", "4", "--microbatches", "8",
                              "--backward-slots", "2"}),
                      {"--summary or --json"});
    }

    // --import reads a torch.distributed.pipelining CSV (INTEROP.md's example: 2 ranks, 1F1B,
    // 6 steps, 4 idle of 12); --export-csv of a slot timeline imports back to the same summary;
    // a malformed cell is refused naming rank, step and cell; every shipped example imports.
    void scheduleImportExport() {
        const QString dir = QDir::tempPath() + "/pipelens-tst-cli-schedule";
        QDir(dir).removeRecursively();
        QVERIFY(QDir().mkpath(dir));
        const QString file = dir + "/two.csv";
        writeFile(file, "0F0,0F1,,0B0,,0B1\n,1F0,1B0,1F1,1B1\n");
        const CliResult r = runCli({"schedule", "--import", file, "--json"});
        QCOMPARE(r.exitCode, 0);
        const json s = json::parse(r.out.toStdString());
        QCOMPARE(s.at("ranks").get<int>(), 2);
        QCOMPARE(s.at("stages").get<int>(), 2);
        QCOMPARE(s.at("microbatches").get<int>(), 2);
        QCOMPARE(s.at("length_slots").get<int>(), 6);
        QVERIFY(std::abs(s.at("bubble_fraction").get<double>() - 4.0 / 12.0) < 1e-12);
        QCOMPARE(s.at("stage_rank"), json({0, 1}));

        const QString pd = dir + "/pd.csv";
        const CliResult e = runCli({"schedule", "--kind", "pd", "--stages", "4", "--microbatches",
                                    "9", "--export-csv", pd, "--json"});
        QCOMPARE(e.exitCode, 0);
        const CliResult back = runCli({"schedule", "--import", pd, "--json"});
        QCOMPARE(back.exitCode, 0);
        QCOMPARE(json::parse(back.out.toStdString()), json::parse(e.out.toStdString()));
        QCOMPARE(json::parse(back.out.toStdString()).at("length_slots").get<int>(),
                 2 * 9 + 2 * (4 - 1));

        writeFile(file, "0F0,0F1,,0B0,,0B1\n,1F0,1X0,1F1,1B1\n");
        expectFailure(runCli({"schedule", "--import", file}), {"rank 1", "step 2", "1X0"});
        writeFile(file, "0F0,0F1,,0BW0,,0BW1\n,1F0,1BW0,1F1,1BW1\n");
        expectFailure(runCli({"schedule", "--import", file}), {"BW", "B"});
        expectFailure(runCli({"schedule", "--import", file, "--stages", "2"}),
                      {"--stages", "--import"});
        expectFailure(runCli({"schedule", "--import", dir}), {dir});
        QDir(dir).removeRecursively();

        const QDir examples(QString(PIPELENS_SOURCE_DIR) + "/examples/schedules");
        const QStringList files = examples.entryList({"*.csv"}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 4, "examples/schedules/ should hold four schedules");
        for (const QString& f : files) {
            const CliResult x = runCli({"schedule", "--import", examples.filePath(f), "--json"});
            QVERIFY2(x.exitCode == 0, qPrintable(f + ": " + x.err));
        }
    }

    void delaysJson() {
        const CliResult r = runCli({"delays", "--stages", "2:8", "--json"});
        QCOMPARE(r.exitCode, 0);
        const json arr = json::parse(r.out.toStdString());
        QVERIFY(arr.is_array());
        QCOMPARE(arr.size(), size_t(7));
        for (size_t i = 0; i < arr.size(); ++i) {
            const json& o = arr[i];
            const int S = static_cast<int>(i) + 2;
            for (const char* key : {"stages", "max", "mean", "p10", "formula"}) {
                QVERIFY2(o.contains(key), key);
            }
            QCOMPARE(o["stages"].get<int>(), S);
            QCOMPARE(o["microbatches"].get<int>(), 10 * S);
            QCOMPARE(o["max"].get<long long>(),
                     static_cast<long long>(std::floor(S * S - S / 2.0)));
            QCOMPARE(o["formula"].get<double>(), std::floor(S * S - S / 2.0));
            QVERIFY(o["p10"].get<long long>() <= o["max"].get<long long>());
            QVERIFY(std::abs(o["mean"].get<double>() / (S * S / 2.0) - 1.0) < 0.3);
        }
        // As a table: columns stages, microbatches, max, formula, mean, S^2/2, p10, p50, p90.
        const CliResult t = runCli({"delays", "--stages", "2:16"});
        QCOMPARE(t.exitCode, 0);
        const QStringList lines = t.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 16);
        for (int S = 2; S <= 16; ++S) {
            const QStringList cols = lines[S - 1].split(' ', Qt::SkipEmptyParts);
            QCOMPARE(cols.size(), 9);
            QCOMPARE(cols[0], QString::number(S));
            const QString want =
                QString::number(static_cast<long long>(std::floor(S * S - S / 2.0)));
            QCOMPARE(cols[2], want);  // max
            QCOMPARE(cols[3], want);  // formula
        }
        QCOMPARE(lines[15].split(' ', Qt::SkipEmptyParts).value(2), QString("248"));
    }

    void runWritesResults() {
        QTemporaryDir tmp;
        const QString cfg = tmp.filePath("small.json");
        writeFile(cfg, smallConfig().dump(2));
        const QString out = tmp.filePath("out");
        const CliResult r = runCli({"run", cfg, "--out", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        for (const char* f : {"summary.json", "config.json", "objective_per_slot.csv",
                              "objective_per_update.csv", "gap_per_update.csv", "theorem.csv",
                              "timeline_0.csv", "delays_0.csv", "timeline_2.csv"}) {
            QVERIFY2(QFile::exists(out + "/" + f), f);
        }
        const json s = json::parse(readFile(out + "/summary.json").toStdString());
        QCOMPARE(s["methods"].size(), size_t(3));
        QVERIFY(r.out.contains("results written to"));
        QCOMPARE(strayEntries(tmp.path(), {"small.json", "out"}), QStringList());
        // --quiet prints nothing.
        const CliResult q = runCli({"run", cfg, "--out", out, "--quiet"});
        QCOMPARE(q.exitCode, 0);
        QVERIFY(q.out.isEmpty() && q.err.isEmpty());
    }

    // run --trace writes a Chrome trace that parses: one X event per F or B row of the
    // timeline CSVs the same run wrote, a process per PD and per LocalSGD replica, none for RPD.
    void runWritesTrace() {
        QTemporaryDir tmp;
        const QString cfg = tmp.filePath("small.json");
        writeFile(cfg, smallConfig().dump(2));
        const QString out = tmp.filePath("out");
        const QString trace = tmp.filePath("trace.json");
        const CliResult r = runCli({"run", cfg, "--out", out, "--trace", trace});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("trace written to " + trace), qPrintable(r.out));
        const json t = json::parse(readFile(trace).toStdString());
        QCOMPARE(t["displayTimeUnit"].get<std::string>(), std::string("ms"));
        std::map<long long, std::string> names;
        for (const json& e : t["traceEvents"]) {
            if (e["ph"] == "M" && e["name"] == "process_name")
                names[e["pid"].get<long long>()] = e["args"]["name"].get<std::string>();
        }
        long long xEvents = 0;
        for (const json& e : t["traceEvents"]) {
            if (e["ph"] != "X") continue;
            ++xEvents;
            QVERIFY(names.count(e["pid"].get<long long>()) == 1);
        }
        long long rows = 0;
        for (const char* f : {"/timeline_0.csv", "/timeline_2.csv"}) {
            for (const QString& line : readFile(out + f).split('\n', Qt::SkipEmptyParts)) {
                // The label comes first, quoted (it may hold commas); then slot, end_slot,
                // stage, op.
                const qsizetype labelEnd =
                    line.startsWith('"') ? line.indexOf('"', 1) + 1 : line.indexOf(',');
                const QStringList cells = line.mid(labelEnd + 1).split(',');
                if (cells.size() > 3 && (cells[3] == "F" || cells[3] == "B")) ++rows;
            }
        }
        QVERIFY(rows > 0);
        QCOMPARE(xEvents, rows);
        QCOMPARE(names.size(), std::size_t(1 + 4));  // PD, then LocalSGD's R = S = 4 replicas
        QVERIFY2(names[2].find("replica 1") != std::string::npos, names[2].c_str());
        // Run again over it: the file is replaced, and --quiet says nothing.
        const CliResult q = runCli({"run", cfg, "--out", out, "--trace", trace, "--quiet"});
        QCOMPARE(q.exitCode, 0);
        QVERIFY(q.out.isEmpty() && q.err.isEmpty());
        QVERIFY(json::parse(readFile(trace).toStdString()).contains("traceEvents"));
    }

    // A --trace that cannot be written is refused before the run, naming the option, with no
    // results folder made.
    void runTraceRefusesBadPaths() {
        QTemporaryDir tmp;
        const QString cfg = tmp.filePath("small.json");
        writeFile(cfg, smallConfig().dump(2));
        const QString out = tmp.filePath("out");
        auto refused = [&](const QString& trace, const QStringList& fragments,
                           const QString& config) {
            expectFailure(runCli({"run", config, "--out", out, "--trace", trace}), fragments);
            QVERIFY2(!QFileInfo::exists(out), qPrintable("results folder made for " + trace));
        };
        refused(tmp.path(), {"--trace", "a folder"}, cfg);
        refused(tmp.filePath("nowhere/trace.json"), {"--trace", "existing folder"}, cfg);
        refused(out + "/trace.json", {"--trace", "inside the results folder"}, cfg);
        refused("", {"--trace", "a file name"}, cfg);
        json rpdOnly = smallConfig();
        rpdOnly["methods"] = json::array({smallConfig()["methods"][1]});
        writeFile(tmp.filePath("rpd.json"), rpdOnly.dump());
        refused(tmp.filePath("trace.json"), {"--trace", "pipeline method"},
                tmp.filePath("rpd.json"));
        QVERIFY(!QFileInfo::exists(tmp.filePath("trace.json")));
    }

    // LocalSGD shorter than one round (N = 12 microbatches, R·H = 4·50) never averages: the
    // run succeeds, stderr says so (with --quiet too) and summary.json lists it.
    void localSgdThatNeverAveragesIsWarnedAbout() {
        QTemporaryDir tmp;
        json c = smallConfig();
        c["methods"][2]["local_steps"] = 50;
        const QString cfg = tmp.filePath("short.json");
        writeFile(cfg, c.dump(2));
        const QString out = tmp.filePath("out");
        const CliResult r = runCli({"run", cfg, "--out", out, "--quiet"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.isEmpty());
        const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].startsWith("pipelens-cli: warning: LocalSGD") &&
                     lines[0].contains("never averages"),
                 qPrintable(r.err));
        const json s = json::parse(readFile(out + "/summary.json").toStdString());
        QCOMPARE(s["warnings"].size(), size_t(1));
        QCOMPARE(QString::fromStdString(s["warnings"][0].get<std::string>()),
                 lines[0].mid(QString("pipelens-cli: warning: ").size()));
        // (runWritesResults: H = 2 averages, and --quiet prints nothing at all.)
    }

    void helpForEveryCommand_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QStringList>("mentions");
        QTest::newRow("schedule") << "schedule"
                                  << QStringList{"--kind",
                                                 "--stages",
                                                 "--microbatches",
                                                 "--noam",
                                                 "--replicas",
                                                 "--local-steps",
                                                 "--art",
                                                 "pd",
                                                 "fill-drain",
                                                 "localsgd",
                                                 "slot,stage,op,microbatch"};
        QTest::newRow("delays") << "delays"
                                << QStringList{"--stages", "A:B", "--json", "--microbatches",
                                               "--from"};
        QTest::newRow("run") << "run"
                             << QStringList{"CONFIG.json", "--out", "--backend", "--threads",
                                            "docs/results.md"};
        QTest::newRow("sweep") << "sweep"
                               << QStringList{"SWEEP.json", "--out", "--resume", "--threads",
                                              "docs/sweeps.md"};
        QTest::newRow("example") << "example"
                                 << QStringList{"pd", "rpd", "localsgd", "sgd", "fill-drain"};
    }
    void helpForEveryCommand() {
        QFETCH(QString, command);
        QFETCH(QStringList, mentions);
        for (const QString& flag : {QString("--help"), QString("-h")}) {
            const CliResult r = runCli({command, flag});
            QCOMPARE(r.exitCode, 0);
            QVERIFY(r.err.isEmpty());
            for (const QString& m : mentions) {
                QVERIFY2(r.out.contains(m), qPrintable(m + " missing from " + command + " --help"));
            }
        }
        // Help wins over otherwise bad options.
        QCOMPARE(runCli({command, "--bogus", "1", "--help"}).exitCode, 0);
    }

    void mainHelp() {
        for (const QString& a : {QString("help"), QString("--help")}) {
            const CliResult r = runCli({a});
            QCOMPARE(r.exitCode, 0);
            for (const char* c : {"schedule", "delays", "run", "sweep", "example"})
                QVERIFY(r.out.contains(c));
        }
        const CliResult none = runCli({});
        QVERIFY(none.exitCode != 0);
    }

    void badInputsFailWithOneLine() {
        expectFailure(runCli({"schedule", "--kind", "pd", "--stages", "0", "--microbatches", "4"}),
                      {"stages", "0"});
        expectFailure(runCli({"schedule", "--kind", "foo", "--stages", "4", "--microbatches", "4"}),
                      {"kind", "foo", "pd, fill-drain, localsgd"});
        expectFailure(
            runCli({"schedule", "--kind", "pd", "--stages", "four", "--microbatches", "4"}),
            {"--stages", "four"});
        expectFailure(runCli({"schedule", "--kind", "pd", "--stages", "4"}), {"--microbatches"});
        expectFailure(runCli({"schedule", "--kind", "localsgd", "--stages", "4", "--microbatches",
                              "8", "--local-steps", "0"}),
                      {"--local-steps", "0"});
        expectFailure(runCli({"schedule", "--kind", "pd", "--stages", "4", "--microbatches", "4",
                              "--frobnicate", "2"}),
                      {"--frobnicate"});
        expectFailure(runCli({"schedule", "--kind", "pd", "--stages"}), {"--stages"});
        expectFailure(runCli({"delays", "--stages", "8:2"}), {"--stages", "8:2"});
        expectFailure(runCli({"delays", "--stages", "0"}), {"--stages"});
        expectFailure(runCli({"frobnicate"}), {"frobnicate"});
        expectFailure(runCli({"example", "adam"}), {"adam"});
    }

    void badRunsFailWithOneLineAndNoOutput() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("out");
        auto check = [&](const QStringList& args, const QStringList& fragments) {
            expectFailure(runCli(args), fragments);
            QVERIFY2(!QFileInfo::exists(out),
                     qPrintable("output folder created by " + args.join(' ')));
            const QStringList stray =
                strayEntries(tmp.path(), {"bad.json", "malformed.json", "nodata.json"});
            QVERIFY2(stray.isEmpty(), qPrintable(stray.join(", ")));
        };
        const QString missing = tmp.filePath("missing.json");
        check({"run", missing, "--out", out}, {missing});
        check({"run", "--out", out}, {"config"});
        json bad = smallConfig();
        bad["stagez"] = 4;
        writeFile(tmp.filePath("bad.json"), bad.dump());
        check({"run", tmp.filePath("bad.json"), "--out", out}, {"stagez"});
        bad = smallConfig();
        bad["methods"][0]["step_size"] = -1;
        writeFile(tmp.filePath("bad.json"), bad.dump());
        check({"run", tmp.filePath("bad.json"), "--out", out}, {"methods[0].step_size", "-1"});
        bad = smallConfig();
        bad["methods"][2]["local_steps"] = 0;
        writeFile(tmp.filePath("bad.json"), bad.dump());
        check({"run", tmp.filePath("bad.json"), "--out", out}, {"local_steps", "0"});
        writeFile(tmp.filePath("malformed.json"), "{\"stages\": 4");
        check({"run", tmp.filePath("malformed.json"), "--out", out},
              {tmp.filePath("malformed.json"), "JSON"});
        json nodata = smallConfig();
        nodata["data"] = {{"source", "npy"}, {"x", "nowhere-X.npy"}, {"y", "nowhere-y.npy"}};
        writeFile(tmp.filePath("nodata.json"), nodata.dump());
        check({"run", tmp.filePath("nodata.json"), "--out", out}, {tmp.filePath("nowhere-X.npy")});
        check({"run", tmp.filePath("nodata.json")}, {"--out"});
        check({"run", tmp.filePath("nodata.json"), "--out", out, "--threads", "x"}, {"--threads"});
    }

    void failedRunKeepsEarlierResults() {
        QTemporaryDir tmp;
        const QString cfg = tmp.filePath("small.json");
        writeFile(cfg, smallConfig().dump());
        const QString out = tmp.filePath("results");
        QCOMPARE(runCli({"run", cfg, "--out", out, "--quiet"}).exitCode, 0);
        const auto before = pipelens::test::snapshotFolder(out.toStdString());
        QVERIFY(before.count("summary.json"));
        json nodata = smallConfig();
        nodata["data"] = {{"source", "csv"}, {"x", "absent.csv"}};
        writeFile(tmp.filePath("nodata.json"), nodata.dump());
        expectFailure(runCli({"run", tmp.filePath("nodata.json"), "--out", out}), {"absent.csv"});
        QVERIFY(pipelens::test::snapshotFolder(out.toStdString()) == before);
        QCOMPARE(strayEntries(tmp.path(), {"small.json", "nodata.json", "results"}), QStringList());
        // With backend auto the backend notice is reported with results only: a failed run
        // prints exactly one line, its reason.
        nodata["backend"] = "auto";
        writeFile(tmp.filePath("nodata.json"), nodata.dump());
        const CliResult r = runCli({"run", tmp.filePath("nodata.json"), "--out", out});
        QVERIFY(r.exitCode > 0);
        const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        QVERIFY(lines[0].contains("absent.csv"));
        QVERIFY(pipelens::test::snapshotFolder(out.toStdString()) == before);
    }

    void exampleCommandPrintsValidConfigs() {
        for (const char* which :
             {"default", "compare", "pd", "rpd", "localsgd", "sgd", "fill-drain", "lm", "1f1b",
              "zb-h1", "2bw", "imported", "interleaved"}) {
            const CliResult r = runCli({"example", which});
            QCOMPARE(r.exitCode, 0);
            // The imported example names a schedule file of the repository, relative to its root.
            const pipelens::ExperimentConfig c = pipelens::ExperimentConfig::fromJson(
                json::parse(r.out.toStdString()), PIPELENS_SOURCE_DIR);
            QVERIFY(!c.methods.empty());
            const std::string key = which;
            if (key != "default" && key != "compare" && key != "lm")
                QCOMPARE(pipelens::methodName(c.methods[0].method), key);
        }
    }

    void sweepWritesItsFolderAndResumes() {
        QTemporaryDir tmp;
        const QString file = QString(PIPELENS_SOURCE_DIR) + "/examples/quick-noise-sweep.json";
        const QString out = tmp.filePath("sweep");
        const CliResult r = runCli({"sweep", file, "--out", out, "--threads", "2"}, 300000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("points 4/4, 100% of the work"), qPrintable(r.err));
        QVERIFY(r.out.contains("4 points over gradient_noise"));
        const auto before = pipelens::test::snapshotFolder(out.toStdString());
        for (const char* f : {"sweep.json", "summary.csv", "summary.json", "points/point-0000.json",
                              "points/point-0003.json"}) {
            QVERIFY2(before.count(f), f);
        }
        const QStringList rows = readFile(out + "/summary.csv").split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 1 + 4 * 2);  // header, 4 points x 2 methods
        QVERIFY(rows[0].startsWith("point,gradient_noise,method,label,step_rule,step_size,"));
        const json s = json::parse(before.at("summary.json"));
        QVERIFY(s["complete"].get<bool>());
        for (const json& p : s["points"]) {
            QCOMPARE(p["seeds"].get<int>(), 3);
            for (const json& m : p["methods"]) QVERIFY(m["final_gap"]["sd"].get<double>() >= 0.0);
        }
        // Noise makes the seeds differ: a spread over seeds at sigma = 1, none at sigma = 0.
        QCOMPARE(s["points"][0]["methods"][0]["final_gap"]["sd"].get<double>(), 0.0);
        QVERIFY(s["points"][3]["methods"][0]["final_gap"]["sd"].get<double>() > 0.0);
        // An existing sweep is not overwritten without --resume ...
        expectFailure(runCli({"sweep", file, "--out", out}), {"--resume"});
        QVERIFY(pipelens::test::snapshotFolder(out.toStdString()) == before);
        // ... and --resume computes only what is missing, to the same files.
        fs::remove(fs::path(out.toStdString()) / "points" / "point-0002.json");
        fs::remove(fs::path(out.toStdString()) / "summary.csv");
        const CliResult again =
            runCli({"sweep", file, "--out", out, "--resume", "--quiet"}, 300000);
        QVERIFY2(again.exitCode == 0, qPrintable(again.err));
        QVERIFY(pipelens::test::snapshotFolder(out.toStdString()) == before);
    }

    void everyExampleRuns_data() {
        QTest::addColumn<QString>("file");
        const QDir examples(QString(PIPELENS_SOURCE_DIR) + "/examples");
        QStringList files = examples.entryList({"*.json"}, QDir::Files, QDir::Name);
        files.removeIf([](const QString& f) { return f.contains("sweep"); });  // sweeps: below
        QVERIFY2(files.size() >= 6, "examples/ should hold one config per method and a comparison");
        for (const QString& f : files) QTest::newRow(qPrintable(f)) << examples.filePath(f);
    }
    void everyExampleRuns() {
        QFETCH(QString, file);
        QTemporaryDir tmp;
        const QString out = tmp.filePath("x");
        QElapsedTimer timer;
        timer.start();
        const CliResult r = runCli({"run", file, "--out", out}, 120000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        qInfo("%s ran in %lld ms", qPrintable(QFileInfo(file).fileName()), timer.elapsed());
        const json s = json::parse(readFile(out + "/summary.json").toStdString());
        const json cfg = json::parse(readFile(file).toStdString());
        QCOMPARE(s["methods"].size(), cfg["methods"].size());
        const bool languageModel = cfg["objective"].value("kind", "") == "char_transformer";
        for (const json& m : s["methods"]) {
            QVERIFY2(m["finished"].get<bool>(), m["label"].get<std::string>().c_str());
            QVERIFY2(!m["diverged"].get<bool>(), m["label"].get<std::string>().c_str());
            if (languageModel) {  // no f*: the loss itself falls
                QVERIFY(m["final_loss"].get<double>() < m["first_forward_loss"].get<double>());
            } else {
                QVERIFY(m["final_gap"].get<double>() <
                        m["initial_objective"].get<double>() - s["f_star"].get<double>());
            }
        }
    }

    // A tiny language model on the built-in corpus, then on a UTF-8 file next to the config.
    void languageModelRunWritesResultsAndLossesFall() {
        QTemporaryDir tmp;
        json cfg = json::parse(R"({
            "name": "cli-lm", "stages": 3, "batch_size": 4,
            "objective": {"kind": "char_transformer", "width": 16, "heads": 2, "context": 8,
                          "corpus_characters": 20000, "held_out_fraction": 0.1,
                          "held_out_every": 50, "sample_lines": 2, "sample_length": 30},
            "budget": {"slots": 300},
            "methods": [{"method": "pd", "step_size": 0.5},
                        {"method": "rpd", "step_size": 0.5, "delta": 4},
                        {"method": "localsgd", "step_size": 0.5, "local_steps": 2}]
        })");
        writeFile(tmp.filePath("lm.json"), cfg.dump());
        const QString out = tmp.filePath("out");
        const CliResult r = runCli({"run", tmp.filePath("lm.json"), "--out", out}, 120000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        // backend auto: the CPU engine, said once as a notice in the summary, as for the linear
        // models (one result type: notices are not warnings).
        QVERIFY2(r.out.contains("notice: backend auto: a small language-model run") &&
                     r.out.contains("runs on the CPU engine"),
                 qPrintable(r.out));
        QVERIFY2(!r.err.contains("warning: backend auto"), qPrintable(r.err));
        QVERIFY(r.out.contains("language model S=3, C=16"));
        for (const char* f :
             {"summary.json", "config.json", "loss_per_slot.csv", "loss_per_update.csv",
              "forward_losses.csv", "held_out.csv", "memory.csv", "samples.txt"}) {
            QVERIFY2(QFile::exists(out + "/" + f), f);
        }
        const json s = json::parse(readFile(out + "/summary.json").toStdString());
        QVERIFY(!s.contains("f_star"));
        QCOMPARE(s["notices"].size(), std::size_t(1));
        QVERIFY(s["notices"][0].get<std::string>().find("a small language-model run") !=
                std::string::npos);
        QCOMPARE(s["methods"].size(), std::size_t(3));
        for (const json& m : s["methods"]) {
            QVERIFY(m["finished"].get<bool>());
            QVERIFY(m["final_loss"].get<double>() < 0.8 * m["first_forward_loss"].get<double>());
            QVERIFY(m["held_out_final"]["loss"].get<double>() <
                    m["first_forward_loss"].get<double>());
            QVERIFY(!m.contains("final_gap") && !m.contains("theorem"));
        }
        const QString samples = readFile(out + "/samples.txt");
        QCOMPARE(samples.count("-- sample "), 6);
        // A corpus file, relative to the config's folder; multi-byte characters are one token.
        std::string text;
        for (int i = 0; i < 400; ++i) text += "Grüße, Welt — ça va? 你好.\n";
        writeFile(tmp.filePath("corpus.txt"), text);
        cfg["objective"]["corpus"] = "corpus.txt";
        cfg["objective"].erase("corpus_characters");
        cfg["backend"] = "cpu";
        writeFile(tmp.filePath("lm.json"), cfg.dump());
        const CliResult f =
            runCli({"run", tmp.filePath("lm.json"), "--out", out, "--quiet"}, 120000);
        QVERIFY2(f.exitCode == 0, qPrintable(f.err));
        QVERIFY(f.err.isEmpty());
        const json fs = json::parse(readFile(out + "/summary.json").toStdString());
        QCOMPARE(fs["objective"]["vocabulary"].get<int>(), 19);  // distinct code points of the line
        // A missing corpus: one line naming the file, exit 1, earlier results kept.
        cfg["objective"]["corpus"] = "missing.txt";
        writeFile(tmp.filePath("lm.json"), cfg.dump());
        expectFailure(runCli({"run", tmp.filePath("lm.json"), "--out", out}), {"missing.txt"});
        QVERIFY(QFile::exists(out + "/summary.json"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
