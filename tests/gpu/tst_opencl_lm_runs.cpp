// The language model on OpenCL from the command line: `run --backend opencl` on a
// char_transformer config runs PD, LocalSGD and RPD on the device, gives the CPU engine's
// numbers and says where it ran; a bad device is refused naming the field.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "opencl_test_support.hpp"

namespace {

// A tiny model on the built-in corpus: PD, LocalSGD and RPD, full objective logged, double.
nlohmann::json tinyLm() {
    return nlohmann::json::parse(R"({
        "name": "cl-lm", "stages": 3, "batch_size": 3, "precision": "double",
        "objective": {"kind": "char_transformer", "width": 12, "heads": 3, "context": 7,
                      "corpus_characters": 4000, "full_objective": true, "sample_lines": 1,
                      "sample_length": 10},
        "budget": {"slots": 40},
        "methods": [{"method": "pd", "step_size": 0.5},
                    {"method": "localsgd", "step_size": 0.5, "local_steps": 2},
                    {"method": "rpd", "step_size": 0.5, "delta": 4}]
    })");
}

struct CliRun {
    int exitCode = -1;
    QString out, err;
};

CliRun runCli(const QStringList& args) {
    QProcess p;
    p.start(PIPELENS_CLI_PATH, args);
    CliRun r;
    if (!p.waitForFinished(300000)) return r;
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

}  // namespace

class TestOpenClLmRuns : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { PIPELENS_REQUIRE_OPENCL(); }

    void commandLineRunMatchesTheCpuEngine() {
        QTemporaryDir dir;
        const QString config = dir.filePath("lm.json");
        std::ofstream(config.toStdString()) << tinyLm().dump(2);
        std::map<std::string, nlohmann::json> summaries;
        std::map<std::string, QString> printed;
        for (const char* backend : {"cpu", "opencl"}) {
            const CliRun r =
                runCli({"run", config, "--backend", backend, "--out", dir.filePath(backend)});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            printed[backend] = r.out;
            std::ifstream in((dir.filePath(backend) + "/summary.json").toStdString());
            summaries[backend] = nlohmann::json::parse(in);
        }
        QCOMPARE(summaries["cpu"]["backend"].get<std::string>(), std::string("cpu"));
        const std::string where = summaries["opencl"]["backend"].get<std::string>();
        // The device, the precision and the CLBlast parameters the products ran with.
        QVERIFY2(
            where.starts_with("opencl: ") && where.find(", double; CLBlast: ") != std::string::npos,
            where.c_str());
        // The summary printed says which engine ran, not "CPU engine" for a device run.
        QVERIFY2(printed["cpu"].contains("block updates, CPU engine in double"),
                 qPrintable(printed["cpu"]));
        const std::string device = where.substr(8, where.find(", double; ") - 8);
        QVERIFY2(printed["opencl"].contains(
                     QString::fromStdString("block updates, OpenCL on " + device + " in double")),
                 qPrintable(printed["opencl"]));
        QVERIFY2(!printed["opencl"].contains("CPU engine in"), qPrintable(printed["opencl"]));
        const auto& a = summaries["cpu"]["methods"];
        const auto& b = summaries["opencl"]["methods"];
        QCOMPARE(b.size(), std::size_t(3));
        // Every method ran on the device: no warning that RPD stayed on the CPU engine.
        for (const auto& w : summaries["opencl"]["warnings"]) {
            QVERIFY2(w.get<std::string>().find("CPU engine") == std::string::npos,
                     w.get<std::string>().c_str());
        }
        QCOMPARE(b.size(), a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            const double cpu = a[i]["final_loss"].get<double>();
            const double cl = b[i]["final_loss"].get<double>();
            QVERIFY2(opencl_test::close(cl, cpu, 1e-9),
                     qPrintable(
                         QString("%1: %2 vs %3").arg(i).arg(cl, 0, 'g', 17).arg(cpu, 0, 'g', 17)));
            QVERIFY(cl < b[i]["first_forward_loss"].get<double>());
        }
    }

    void badDeviceIsRefusedNamingTheField() {
        QTemporaryDir dir;
        const QString config = dir.filePath("lm.json");
        std::ofstream(config.toStdString()) << tinyLm().dump(2);
        const CliRun r = runCli({"run", config, "--backend", "opencl", "--device", "97", "--out",
                                 dir.filePath("out"), "--quiet"});
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("device = \"97\""), qPrintable(r.err));
    }
};

QTEST_APPLESS_MAIN(TestOpenClLmRuns)
#include "tst_opencl_lm_runs.moc"
