// Input readers on hostile files (issue 28): FIFOs and devices refused without blocking, reads
// capped by the bytes read, sweep and point files through the config reader's discipline, and
// the data readers naming the file, row and column of a bad value.
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <Eigen/Dense>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/expect_error.hpp"
#include "data/loaders.hpp"
#include "data/text_corpus.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/run/experiment.hpp"
#include "experiment/sweep/point_result.hpp"
#include "experiment/sweep/sweep_spec.hpp"

using namespace pipelens;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// Runs `f` on a FIFO. Should the reader under test open it and wait (the old behaviour), a
// watchdog opens the other end after two seconds and closes it, so the reader sees the end of
// the input and the test fails on its message instead of hanging.
void withFifo(const fs::path& fifo, const std::function<void()>& f) {
    QVERIFY(::mkfifo(fifo.c_str(), 0600) == 0);
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread watchdog([&] {
        std::unique_lock lock(m);
        if (cv.wait_for(lock, std::chrono::seconds(2), [&] { return done; })) return;
        for (int i = 0; i < 100 && !done; ++i) {
            const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0) {
                ::close(fd);
                return;
            }
            cv.wait_for(lock, std::chrono::milliseconds(50));
        }
    });
    const auto start = std::chrono::steady_clock::now();
    f();
    {
        std::lock_guard lock(m);
        done = true;
    }
    cv.notify_all();
    watchdog.join();
    QVERIFY2(std::chrono::steady_clock::now() - start < std::chrono::seconds(2),
             "the reader waited on the FIFO");
}

json smallConfig() {
    return {{"stages", 2},
            {"batch_size", 5},
            {"backend", "cpu"},
            {"data", {{"rows", 20}, {"dim", 4}}},
            {"budget", {{"microbatches", 6}}},
            {"methods", json::array({{{"method", "pd"}, {"step_size", 0.1}}})}};
}

std::string nested(int depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

class TstFileReading : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    fs::path dir() const { return fs::path(tmp_.path().toStdString()); }
    std::string path(const std::string& name) const { return (dir() / name).string(); }

  private slots:
    // A FIFO as a config, sweep file or data file blocked forever.
    void fifosRefusedWithoutBlocking() {
        withFifo(dir() / "c.json", [&] {
            expectError<ConfigError>([&] { ExperimentConfig::fromFile(path("c.json")); },
                                     {"config file '" + QString::fromStdString(path("c.json")) +
                                      "' is a FIFO (named pipe), not a regular file"});
        });
        withFifo(dir() / "s.json", [&] {
            expectError<ConfigError>([&] { SweepSpec::fromFile(path("s.json")); },
                                     {"sweep file", "s.json", "is a FIFO (named pipe)"});
        });
        withFifo(dir() / "d.csv", [&] {
            expectError<DataError>([&] { loadCsv(path("d.csv")); },
                                   {"CSV file", "d.csv", "is a FIFO (named pipe)"});
        });
        withFifo(dir() / "d.svm", [&] {
            expectError<DataError>([&] { loadLibsvm(path("d.svm")); },
                                   {"LIBSVM file", "d.svm", "is a FIFO (named pipe)"});
        });
        withFifo(dir() / "d.npy", [&] {
            expectError<DataError>([&] { loadNpyMatrix(path("d.npy")); },
                                   {"npy file", "d.npy", "is a FIFO (named pipe)"});
        });
        withFifo(dir() / "t.txt", [&] {
            expectError<DataError>([&] { loadTextCorpus(path("t.txt")); },
                                   {"text corpus", "t.txt", "is a FIFO (named pipe)"});
        });
    }

    // /dev/zero was read until memory ran out. Only safe to run once devices are refused: the
    // first check is on the config reader, whose old code is caught by the 16 MiB limit.
    void devicesRefused() {
        expectError<ConfigError>([&] { ExperimentConfig::fromFile("/dev/zero"); },
                                 {"'/dev/zero' is a character device, not a regular file"});
        expectError<DataError>([&] { loadCsv("/dev/null"); },
                               {"CSV file '/dev/null' is a character device"});
        expectError<DataError>([&] { loadTextCorpus("/dev/null"); },
                               {"text corpus '/dev/null' is a character device"});
        expectError<ConfigError>([&] { SweepSpec::fromFile(dir().string()); },
                                 {"sweep file", "is a folder, not a file"});
        expectError<ConfigError>([&] { SweepSpec::fromFile(""); },
                                 {"sweep file '' does not exist"});
    }

    // Control bytes of a path are escaped in every reader's message.
    void pathsEscapedInMessages() {
        const std::string bad = path("a\x1b[2Jb.json");
        expectError<ConfigError>([&] { ExperimentConfig::fromFile(bad); }, {"a\\x1b[2Jb.json"});
        expectError<ConfigError>([&] { SweepSpec::fromFile(bad); }, {"a\\x1b[2Jb.json"});
        expectError<DataError>([&] { loadCsv(bad); }, {"a\\x1b[2Jb.json"});
        expectError<DataError>([&] { loadTextCorpus(bad); }, {"a\\x1b[2Jb.json"});
        try {
            SweepSpec::fromFile(bad);
        } catch (const std::exception& e) {
            QVERIFY(std::string(e.what()).find('\x1b') == std::string::npos);
        }
    }

    // Sweep text went through plain json::parse: 1e999 leaked a library message, a duplicate
    // key was taken, a deep file overflowed the stack when a message dumped it.
    void sweepTextThroughTheConfigReader() {
        json s = {{"experiment", smallConfig()},
                  {"axis", {{"name", "stages"}, {"values", {1, 2}}}}};
        QCOMPARE(SweepSpec::fromText(s.dump(), "s.json").points(), std::size_t(2));
        std::string text = s.dump();
        text.insert(text.size() - 1, ", \"seeds\": 1e999");
        try {
            SweepSpec::fromText(text, "s.json");
            QFAIL("1e999 accepted");
        } catch (const ConfigError& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.find("s.json has a number that is not allowed") != std::string::npos,
                     msg.c_str());
            QVERIFY2(msg.find("[json.exception") == std::string::npos, msg.c_str());
        }
        expectError<ConfigError>(
            [&] { SweepSpec::fromText(R"({"seeds": 2, "seeds": 3})", "dup.json"); },
            {"key \"seeds\" appears twice"});
        expectError<ConfigError>([&] { SweepSpec::fromText(nested(60000), "deep.json"); },
                                 {"deep.json", "64 deep"});
        // Values in messages are excerpts, never the whole value.
        json big = s;
        big["name"] = json::array();
        for (int i = 0; i < 100000; ++i) big["name"].push_back(i);
        try {
            SweepSpec::fromJson(big);
            QFAIL("a list accepted as a name");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).size() < 300, e.what());
        }
        json huge = s;
        huge["axis"]["values"] = {std::string(1'000'000, 'x')};
        try {
            SweepSpec::fromJson(huge);
            QFAIL("a string accepted as a value");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).size() < 300, e.what());
        }
        json axis = s;
        axis["axis"]["name"] = std::string(1'000'000, 'y') + "\x1b";
        try {
            SweepSpec::fromJson(axis);
            QFAIL("a bad axis name accepted");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).size() < 400, e.what());
        }
    }

    // A damaged point file crashed `sweep --resume`.
    void pointFilesThroughTheConfigReader() {
        expectError<ConfigError>([&] { pointResultFromText(nested(60000), "p.json"); },
                                 {"p.json", "64 deep"});
        expectError<ConfigError>([&] { pointResultFromText("{\"index\": 1e999}", "p.json"); },
                                 {"number that is not allowed"});
        expectError<ConfigError>(
            [&] {
                pointResultFromText(R"({"index": -1, "value": 1, "seeds": 1, "f_star": 0,
                                          "methods": []})",
                                    "p.json");
            },
            {"point.index = -1"});
        json p = {{"index", 0},
                  {"value", 1},
                  {"seeds", 1},
                  {"f_star", 0},
                  {"methods", json::array({{{"label", std::string(1'000'000, 'z')}}})}};
        p["value"] = json::array({json::array({std::string(1'000'000, 'v')})});
        try {
            pointResultFromText(p.dump(), "p.json");
            QFAIL("a list accepted as a value");
        } catch (const ConfigError& e) {
            QVERIFY2(std::string(e.what()).size() < 300, e.what());
        }
    }

    // A first row with one bad cell among numbers was silently skipped as a header.
    void csvFirstRowWithNumbersIsData() {
        expectError<DataError>(
            [&] { parseCsv("1,nan,3\n4,5,6\n7,8,9\n", "d.csv"); },
            {"CSV file 'd.csv', line 1, column 2: 'nan' is not a finite number", "not a header"});
        const Dataset header = parseCsv("a,b,y\n4,5,6\n7,8,9\n", "h.csv");
        QCOMPARE(header.X.rows(), Eigen::Index(2));
        const Dataset quoted = parseCsv("\"x 1\",\"x 2\",label\n4,5,6\n", "q.csv");
        QCOMPARE(quoted.X.rows(), Eigen::Index(1));
    }

    // NaN in an .npy and logistic labels outside {0, 1}: the file, the row and the column.
    void npyAndLabelsNameTheirPlace() {
        Eigen::MatrixXd X = Eigen::MatrixXd::Ones(4, 3);
        X(2, 1) = std::numeric_limits<double>::quiet_NaN();
        saveNpy(path("x.npy"), X);
        expectError<DataError>([&] { loadNpyMatrix(path("x.npy")); },
                               {"x.npy", "row 2, column 1", "NaN"});
        Eigen::VectorXd y = Eigen::VectorXd::Zero(4);
        y[3] = std::numeric_limits<double>::infinity();
        saveNpy(path("y.npy"), y);
        expectError<DataError>([&] { loadNpyVector(path("y.npy")); }, {"y.npy", "row 3", "inf"});

        writeFile(dir() / "l.csv", "f1,f2,y\n1,2,0\n3,4,1\n5,6,2\n7,8,1\n");
        json c = smallConfig();
        c["stages"] = 1;
        c["batch_size"] = 2;
        c["objective"] = {{"kind", "logistic"}};
        c["data"] = {{"source", "csv"}, {"x", path("l.csv")}};
        const ExperimentConfig config = ExperimentConfig::fromJson(c);
        expectError<DataError>([&] { buildObjective(config); },
                               {"l.csv", "data row 3", "column 3", "label 2"});
    }
};

QTEST_GUILESS_MAIN(TstFileReading)
#include "tst_file_reading.moc"
