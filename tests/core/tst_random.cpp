// NumpyRandom against NumPy's own draws (tests/data/random, made by
// scripts/make_random_vectors.py with Debian's python3-numpy): every value bit for bit.
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "random/numpy_random.hpp"
#include "random/pcg64.hpp"

using namespace pipelens;
using nlohmann::json;

namespace {

json loadVectors(const std::string& name) {
    const std::string path = std::string(PIPELENS_SOURCE_DIR) + "/tests/data/random/" + name;
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error("cannot open " + path);
    }
    return json::parse(in);
}

double fromHex(const json& value) {
    return std::strtod(value.get<std::string>().c_str(), nullptr);
}

std::uint64_t bits(double value) {
    return std::bit_cast<std::uint64_t>(value);
}

// Compares doubles by their bit patterns; names the first element that differs.
void compareBits(const std::vector<double>& got, const json& expected, const std::string& what) {
    QCOMPARE(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double want = fromHex(expected[i]);
        QVERIFY2(bits(got[i]) == bits(want), qPrintable(QString("%1[%2]: got %3, NumPy %4")
                                                            .arg(QString::fromStdString(what))
                                                            .arg(i)
                                                            .arg(got[i], 0, 'g', 17)
                                                            .arg(want, 0, 'g', 17)));
    }
}

std::vector<double> normals(NumpyRandom& rng, double scale, std::size_t count) {
    std::vector<double> out(count);
    rng.normal(scale, out);
    return out;
}

std::vector<std::int64_t> shuffledRange(NumpyRandom& rng, std::size_t size) {
    std::vector<std::int64_t> values(size);
    std::iota(values.begin(), values.end(), std::int64_t{0});
    rng.shuffle(std::span<std::int64_t>(values));
    return values;
}

std::vector<std::int64_t> asInts(const json& values) {
    return values.get<std::vector<std::int64_t>>();
}

}  // namespace

class TestRandom : public QObject {
    Q_OBJECT

    json streams_;
    json longNormal_;

    const json& cases() const { return streams_["cases"]; }

  private slots:
    void initTestCase() {
        streams_ = loadVectors("streams.json");
        longNormal_ = loadVectors("long_normal.json");
        QVERIFY(cases().size() >= 6);
        qInfo("vectors from NumPy %s", streams_["numpy"].get<std::string>().c_str());
    }

    void firstOutputOfSeedZero() {
        // SPEC section 6 states it.
        Pcg64 bitsOfZero(0);
        QCOMPARE(bitsOfZero.nextU64(), std::uint64_t{0xa30febcfd9c2825fULL});
    }

    void seedSequence() {
        for (const json& c : cases()) {
            const auto seed = c["seed"].get<std::uint64_t>();
            QCOMPARE(seedSequenceState(seed, 8),
                     c["seed_state32"].get<std::vector<std::uint32_t>>());
        }
    }

    void rawOutputsAndRandom() {
        for (const json& c : cases()) {
            const auto seed = c["seed"].get<std::uint64_t>();
            NumpyRandom raw(seed);
            for (const json& want : c["raw_u64"]) {
                QCOMPARE(raw.nextU64(), want.get<std::uint64_t>());
            }
            NumpyRandom uniform(seed);
            std::vector<double> got;
            for (std::size_t i = 0; i < c["random"].size(); ++i) {
                got.push_back(uniform.random());
            }
            compareBits(got, c["random"], "random");
        }
    }

    void halfWordsCarryOver() {
        // next_u32 keeps the high half of a 64-bit output for the next call; next_u64 between
        // them neither uses nor clears it.
        for (const json& c : cases()) {
            NumpyRandom rng(c["seed"].get<std::uint64_t>());
            const auto pattern = c["u32_u64_pattern"].get<std::string>();
            for (std::size_t i = 0; i < pattern.size(); ++i) {
                const std::uint64_t got = pattern[i] == '3' ? rng.nextU32() : rng.nextU64();
                QCOMPARE(got, c["u32_u64_values"][i].get<std::uint64_t>());
            }
        }
    }

    void integers() {
        int checked = 0;
        for (const json& c : cases()) {
            NumpyRandom rng(c["seed"].get<std::uint64_t>());
            for (const json& bound : c["integers"]) {
                const auto high = bound["high"].get<std::int64_t>();
                for (const json& want : bound["scalar"]) {
                    QCOMPARE(rng.integers(high), want.get<std::int64_t>());
                }
                QCOMPARE(rng.integers(high, bound["sized"].size()), asInts(bound["sized"]));
                checked += static_cast<int>(bound["scalar"].size() + bound["sized"].size());
            }
            // The stream continues where NumPy's does (same number of words used).
            QCOMPARE(rng.nextU64(), c["integers_next_u64"].get<std::uint64_t>());
        }
        qInfo("%d integers equal NumPy's", checked);
    }

    void shuffle() {
        for (const json& c : cases()) {
            NumpyRandom rng(c["seed"].get<std::uint64_t>());
            for (const json& want : c["shuffles"]) {
                QCOMPARE(shuffledRange(rng, want.size()), asInts(want));
            }
            QCOMPARE(rng.nextU64(), c["shuffles_next_u64"].get<std::uint64_t>());
        }
    }

    void normalElementwise() {
        std::size_t checked = 0;
        for (const json& c : cases()) {
            NumpyRandom rng(c["seed"].get<std::uint64_t>());
            std::vector<double> got;
            for (std::size_t i = 0; i < c["normal"].size(); ++i) {
                got.push_back(rng.standardNormal());
            }
            compareBits(got, c["normal"], "standard_normal");
            checked += got.size();

            const json& scaled = c["normal_scaled"];
            NumpyRandom matrixRng(c["seed"].get<std::uint64_t>());
            const Eigen::MatrixXd m =
                matrixRng.normalMatrix(scaled["rows"].get<int>(), scaled["cols"].get<int>(),
                                       scaled["scale"].get<double>());
            std::vector<double> rowMajor;
            for (Eigen::Index i = 0; i < m.rows(); ++i) {
                for (Eigen::Index j = 0; j < m.cols(); ++j) {
                    rowMajor.push_back(m(i, j));
                }
            }
            compareBits(rowMajor, scaled["values"], "normal(scale=0.5, size=(4, 3))");
        }
        qInfo("%zu normals equal NumPy's element by element", checked);
    }

    void normalLongRun() {
        // 200000 draws reach the tail (|z| > r) and the wedges many times: hash of the bit
        // patterns, the last value, and the next 64-bit output (the same number of words used).
        for (const json& run : longNormal_["runs"]) {
            NumpyRandom rng(run["seed"].get<std::uint64_t>());
            const auto count = run["count"].get<std::size_t>();
            std::uint64_t hash = 0xcbf29ce484222325ULL;
            double last = 0.0;
            int tail = 0;
            for (std::size_t i = 0; i < count; ++i) {
                last = rng.standardNormal();
                hash = (hash ^ bits(last)) * 0x100000001b3ULL;
                tail += std::abs(last) > 3.6541528853610088 ? 1 : 0;
            }
            QCOMPARE(hash, run["fnv1a"].get<std::uint64_t>());
            QCOMPARE(bits(last), bits(fromHex(run["last"])));
            QCOMPARE(rng.nextU64(), run["next_u64"].get<std::uint64_t>());
            QCOMPARE(tail, run["tail_draws"].get<int>());
            QVERIFY(tail > 0);
            QVERIFY(run["u64_used"].get<std::size_t>() > count);  // wedge and tail tries happened
            qInfo("seed %llu: %zu normals (%d in the tail, %zu words) equal NumPy's",
                  static_cast<unsigned long long>(run["seed"].get<std::uint64_t>()), count, tail,
                  run["u64_used"].get<std::size_t>());
        }
    }

    void binomialOfOne() {
        for (const json& c : cases()) {
            NumpyRandom rng(c["seed"].get<std::uint64_t>());
            const json& b = c["binomial"];
            for (std::size_t i = 0; i < b["p"].size(); ++i) {
                QVERIFY2(rng.bernoulli(fromHex(b["p"][i])) == b["values"][i].get<int>(),
                         qPrintable(QString("element %1").arg(i)));
            }
            QCOMPARE(rng.nextU64(), b["next_u64"].get<std::uint64_t>());
        }
    }

    void interleavedOnOneGenerator() {
        for (const json& c : cases()) {
            NumpyRandom rng(c["seed"].get<std::uint64_t>());
            for (const json& step : c["interleaved"]) {
                const auto draw = step["draw"].get<std::string>();
                const json& want = step["values"];
                if (draw == "integers") {
                    const auto high = step["high"].get<std::int64_t>();
                    if (want.size() == 1) {
                        QCOMPARE(rng.integers(high), want[0].get<std::int64_t>());
                    } else {
                        std::vector<std::int64_t> got(want.size());
                        rng.integers(high, std::span<std::int64_t>(got));
                        QCOMPARE(got, asInts(want));
                    }
                } else if (draw == "normal") {
                    compareBits(normals(rng, step["scale"].get<double>(), want.size()), want,
                                "interleaved normal");
                } else if (draw == "shuffle") {
                    QCOMPARE(shuffledRange(rng, step["size"].get<std::size_t>()), asInts(want));
                } else if (draw == "random") {
                    compareBits({rng.random()}, want, "interleaved random");
                } else if (draw == "binomial") {
                    for (std::size_t i = 0; i < want.size(); ++i) {
                        QCOMPARE(rng.bernoulli(fromHex(step["p"][i])), want[i].get<int>());
                    }
                } else {
                    QFAIL(qPrintable(QString::fromStdString("unknown draw " + draw)));
                }
            }
            QCOMPARE(rng.nextU64(), c["interleaved_next_u64"].get<std::uint64_t>());
        }
    }

    void drawsThatUseNoWords() {
        // integers(0, 1) and binomial(1, 0) draw nothing, as in NumPy.
        NumpyRandom a(9);
        NumpyRandom b(9);
        QCOMPARE(a.integers(1), std::int64_t{0});
        QCOMPARE(a.integers(1, 5), std::vector<std::int64_t>(5, 0));
        QCOMPARE(a.bernoulli(0.0), 0);
        QCOMPARE(a.nextU64(), b.nextU64());
    }

    void rejectsBadArguments() {
        NumpyRandom rng(0);
        const auto throwsNaming = [](auto&& call, const std::string& needle) {
            try {
                call();
            } catch (const std::invalid_argument& e) {
                return std::string(e.what()).find(needle) != std::string::npos;
            }
            return false;
        };
        QVERIFY(throwsNaming([&] { rng.integers(0); }, "high = 0"));
        QVERIFY(
            throwsNaming([&] { rng.integers((std::int64_t{1} << 32) + 1); }, "high = 4294967297"));
        QVERIFY(throwsNaming([&] { rng.integers(-3, 2); }, "[1, 2^32]"));
        QVERIFY(throwsNaming([&] { rng.bernoulli(1.5); }, "p = 1.5"));
        QVERIFY(throwsNaming([&] { rng.bernoulli(std::numeric_limits<double>::quiet_NaN()); },
                             "[0, 1]"));
    }
};

QTEST_APPLESS_MAIN(TestRandom)
#include "tst_random.moc"
