// `backend: auto` for the language model (backend/lm_calibration.hpp, selectLmBackend): a small
// run takes the CPU engine without opening a device; a large one is measured once per device
// and model shape, cached, and runs where the cost model predicts it is faster; the notice says
// which and why; a damaged cache is measured anew.
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend_select.hpp"
#include "lm_calibration.hpp"
#include "opencl_test_support.hpp"

using namespace pipelens;

namespace {

ExperimentConfig tinyLm() {
    return ExperimentConfig::fromJson(nlohmann::json::parse(R"({
        "name": "auto-lm", "stages": 3, "batch_size": 3, "backend": "auto",
        "objective": {"kind": "char_transformer", "width": 12, "heads": 3, "context": 7,
                      "corpus_characters": 2000},
        "budget": {"slots": 40},
        "methods": [{"method": "pd", "step_size": 0.5},
                    {"method": "rpd", "step_size": 0.5, "delta": 4}]
    })"));
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

// How many of tinyLm's two methods the CPU engine runs at once: one per core, at most two.
int atOnce() {
    return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 2u));
}

// A time as the notices print it.
std::string seconds(double s) {
    std::ostringstream o;
    o.precision(s < 10 ? 2 : 3);
    o << s << " s";
    return o.str();
}

nlohmann::json readCache() {
    std::ifstream in(lmCalibrationCachePath());
    return nlohmann::json::parse(in);
}

}  // namespace

class TestLmAutoBackend : public QObject {
    Q_OBJECT
    QTemporaryDir cache_;

  private slots:
    void initTestCase() {
        PIPELENS_REQUIRE_OPENCL();
        qputenv("PIPELENS_CACHE_DIR", cache_.path().toUtf8());
    }
    void init() {
        qunsetenv("PIPELENS_AUTO_LM_MIN_FLOPS");
        std::filesystem::remove(lmCalibrationCachePath());
    }

    void cyclesCountEveryMethodGridPointAndSeed() {
        ExperimentConfig c = tinyLm();
        // PD: 40 slots = 20 microbatches; RPD: PD's 60 updates at 3/4 of a cycle each.
        QCOMPARE(lmRunCycles(c, 10), 20.0 + 0.75 * 3 * 20);
        c.methods[0].step.grid = true;
        c.methods[0].step.gridMin = -3;
        c.methods[0].step.gridMax = -1;
        c.seeds = 2;
        QCOMPARE(lmRunCycles(c, 10), 2 * (3 * 20.0 + 0.75 * 3 * 20));
    }

    void aSmallRunTakesTheCpuWithoutMeasuring() {
        std::vector<std::string> notices;
        const LmBackendChoice choice = selectLmBackend(tinyLm(), notices);
        QVERIFY(!choice.executor);
        QCOMPARE(choice.name, std::string("cpu"));
        QVERIFY2(joined(notices).find("a small language-model run") != std::string::npos,
                 joined(notices).c_str());
        QVERIFY(!std::filesystem::exists(lmCalibrationCachePath()));
    }

    void aLargeRunIsMeasuredOnceAndCached() {
        qputenv("PIPELENS_AUTO_LM_MIN_FLOPS", "0");
        std::vector<std::string> first, second;
        const LmBackendChoice a = selectLmBackend(tinyLm(), first);
        QVERIFY2(joined(first).find("measured now") != std::string::npos, joined(first).c_str());
        const nlohmann::json cache = readCache();
        QCOMPARE(cache.size(), std::size_t(2));  // the CPU engine and the device
        for (const auto& [key, cost] : cache.items()) {
            QVERIFY2(cost["base"].get<double>() > 0 && cost["block"].get<double>() > 0,
                     key.c_str());
        }
        const LmBackendChoice b = selectLmBackend(tinyLm(), second);
        QVERIFY2(joined(second).find("measured earlier") != std::string::npos,
                 joined(second).c_str());
        QCOMPARE(b.name, a.name);
        qInfo("%s", joined(second).c_str());
    }

    // The CPU engine is timed on the threads each of the experiment's methods gets when they
    // run side by side (both cores for a lone method), and its key says how many: a lone
    // method's calibration is not reused for two, nor the other way round.
    void theCpuIsTimedOnItsRunsThreads() {
        qputenv("PIPELENS_AUTO_LM_MIN_FLOPS", "0");
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        std::vector<std::string> notices;
        ExperimentConfig lone = tinyLm();
        lone.methods.resize(1);
        selectLmBackend(lone, notices);
        selectLmBackend(tinyLm(), notices);
        std::vector<std::string> cpuKeys;
        const nlohmann::json cache = readCache();
        for (const auto& [key, cost] : cache.items()) {
            if (key.find("| cpu on ") != std::string::npos) cpuKeys.push_back(key);
        }
        const auto threads = [](unsigned n) {
            return "| cpu on " + std::to_string(n) + (n == 1 ? " thread |" : " threads |");
        };
        QCOMPARE(cpuKeys.size(), std::size_t(cores >= 2 ? 2 : 1));
        const std::string all = joined(cpuKeys);
        QVERIFY2(all.find(threads(cores)) != std::string::npos, all.c_str());
        QVERIFY2(all.find(threads(std::max(1u, cores / 2))) != std::string::npos, all.c_str());
        const std::string text = joined(notices);
        QVERIFY2(text.find("on the CPU engine on " + std::to_string(cores) + " thread") !=
                     std::string::npos,
                 text.c_str());
        QVERIFY2(
            text.find(std::to_string(atOnce()) + " of the 2 methods at once") != std::string::npos,
            text.c_str());
    }

    void theFasterPredictionWins() {
        qputenv("PIPELENS_AUTO_LM_MIN_FLOPS", "0");
        std::vector<std::string> notices;
        selectLmBackend(tinyLm(), notices);  // fills the cache with both keys
        nlohmann::json cache = readCache();
        std::string cpuKey, deviceKey;
        for (const auto& [key, cost] : cache.items())
            (key.find("| cpu on ") != std::string::npos ? cpuKey : deviceKey) = key;
        QVERIFY(!cpuKey.empty() && !deviceKey.empty());
        for (bool deviceFaster : {true, false}) {
            cache[cpuKey] = {{"base", deviceFaster ? 1.0 : 1e-3},
                             {"block", deviceFaster ? 1.0 : 1e-3}};
            cache[deviceKey] = {{"base", deviceFaster ? 1e-3 : 1.0},
                                {"block", deviceFaster ? 1e-3 : 1.0}};
            std::ofstream(lmCalibrationCachePath()) << cache.dump();
            notices.clear();
            const LmBackendChoice c = selectLmBackend(tinyLm(), notices);
            const std::string text = joined(notices);
            QVERIFY2(text.find("measured earlier") != std::string::npos, text.c_str());
            if (deviceFaster) {
                QVERIFY(c.executor && c.rpdExecutor);
                QVERIFY2(c.name.starts_with("opencl: "), c.name.c_str());
                QVERIFY2(text.find("runs on opencl: ") != std::string::npos, text.c_str());
            } else {
                QVERIFY(!c.executor && !c.rpdExecutor);
                QVERIFY2(text.find("runs on the CPU engine: predicted") != std::string::npos,
                         text.c_str());
            }
            // 40 slots: 20 PD cycles + 45 RPD cycles, each base + (3 - 2) block; on the CPU
            // engine the two methods run side by side, as many at once as there are cores.
            const double device = 65 * (deviceFaster ? 2e-3 : 2.0);
            const double cpu = 65 * (deviceFaster ? 2.0 : 2e-3) / atOnce();
            const std::string want = "predicted " + seconds(deviceFaster ? device : cpu) +
                                     " there against " + seconds(deviceFaster ? cpu : device);
            QVERIFY2(text.find(want) != std::string::npos, (want + "\n" + text).c_str());
        }
    }

    // The device's name carries the CLBlast parameters in force, and every key the engines'
    // revision: a calibration cached by an older build (other kernels, other parameters) is
    // measured again, never reused as if it were current.
    void aCalibrationOfOtherEnginesIsMeasuredAnew() {
        qputenv("PIPELENS_AUTO_LM_MIN_FLOPS", "0");
        std::vector<std::string> notices;
        selectLmBackend(tinyLm(), notices);
        nlohmann::json cache = readCache(), older;
        const std::string revision = "engines r" + std::to_string(kLmEngineRevision) + " | ";
        for (const auto& [key, cost] : cache.items()) {
            QVERIFY2(key.starts_with(revision), key.c_str());
            if (key.find("| cpu on ") == std::string::npos) {
                QVERIFY2(key.find("; CLBlast: ") != std::string::npos, key.c_str());
            }
            older["engines r" + std::to_string(kLmEngineRevision - 1) + " | " +
                  key.substr(revision.size())] = {{"base", 1e-3}, {"block", 1e-3}};
        }
        std::ofstream(lmCalibrationCachePath()) << older.dump();
        notices.clear();
        selectLmBackend(tinyLm(), notices);
        QVERIFY2(joined(notices).find("measured now") != std::string::npos,
                 joined(notices).c_str());
        QCOMPARE(readCache().size(), std::size_t(4));  // the older entries stay, unused
    }

    void theDeviceNameSaysWhichClblastParameters() {
        ExperimentConfig c = tinyLm();
        c.backend = BackendKind::OpenCl;
        std::vector<std::string> notices;
        const LmBackendChoice choice = selectLmBackend(c, notices);
        QVERIFY(choice.executor);
        const bool pocl =
            opencl_test::context()->info().platform.find("Portable Computing") != std::string::npos;
        const bool off = qgetenv("PIPELENS_CLBLAST_TUNING") == "off" ||
                         qgetenv("PIPELENS_CLBLAST_TUNING") == "0";
        const std::string want = pocl && !off ? "; CLBlast: Xgemm tuned for PoCL's CPU device ("
                                              : "; CLBlast: default parameters";
        QVERIFY2(choice.name.find(want) != std::string::npos, choice.name.c_str());
    }

    void aDamagedCacheIsMeasuredAnew() {
        qputenv("PIPELENS_AUTO_LM_MIN_FLOPS", "0");
        std::filesystem::create_directories(
            std::filesystem::path(lmCalibrationCachePath()).parent_path());
        std::ofstream(lmCalibrationCachePath()) << "{ not json";
        std::vector<std::string> notices;
        selectLmBackend(tinyLm(), notices);
        QVERIFY2(joined(notices).find("measured now") != std::string::npos,
                 joined(notices).c_str());
        QCOMPARE(readCache().size(), std::size_t(2));
    }
};

QTEST_APPLESS_MAIN(TestLmAutoBackend)
#include "tst_lm_auto_backend.moc"
