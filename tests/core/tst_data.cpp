// Loaders (.npy, CSV, LIBSVM) and the synthetic generators of SPEC section 1.
#include <QTemporaryDir>
#include <QtTest>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "data/loaders.hpp"
#include "data/memory_limit.hpp"
#include "data/synthetic.hpp"
#include "errors.hpp"
#include "random/numpy_random.hpp"

using namespace pipelens;

// Fails the test unless `expr` throws `Type` whose message contains `needle`.
#define EXPECT_THROW_WITH(Type, expr, needle)                                                  \
    do {                                                                                       \
        bool thrown_ = false;                                                                  \
        try {                                                                                  \
            (void)(expr);                                                                      \
        } catch (const Type& e_) {                                                             \
            thrown_ = true;                                                                    \
            QVERIFY2(std::string(e_.what()).find(needle) != std::string::npos,                 \
                     (std::string("message lacks '") + (needle) + "': " + e_.what()).c_str()); \
        }                                                                                      \
        QVERIFY2(thrown_, "expected " #Type " from " #expr);                                   \
    } while (0)

namespace {

std::string goldenDir(const std::string& name) {
    return std::string(PIPELENS_GOLDEN_DIR) + "/" + name;
}

// A complete .npy file: prefix, the given header dict padded to 64 bytes, then `payload`.
std::string npyBytes(const std::string& dict, const std::string& payload, int major = 1) {
    const std::size_t prefix = major == 1 ? 10 : 12;
    std::string header = dict;
    std::size_t total = prefix + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += static_cast<char>(major);
    bytes += '\0';
    std::size_t length = header.size();
    bytes += static_cast<char>(length & 0xff);
    bytes += static_cast<char>((length >> 8) & 0xff);
    if (major != 1) {
        bytes += std::string(2, '\0');
    }
    return bytes + header + payload;
}

template <typename T>
std::string rawBytes(const std::vector<T>& values, bool swap = false) {
    std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    if (swap) {
        for (std::size_t i = 0; i < values.size(); ++i) {
            std::reverse(bytes.begin() + static_cast<long>(i * sizeof(T)),
                         bytes.begin() + static_cast<long>((i + 1) * sizeof(T)));
        }
    }
    return bytes;
}

Eigen::MatrixXd gram(const Eigen::MatrixXd& X) {
    return X.transpose() * X / static_cast<double>(X.rows());
}

Eigen::VectorXd gramEigenvalues(const Eigen::MatrixXd& X) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(gram(X), Eigen::EigenvaluesOnly);
    return solver.eigenvalues();  // ascending
}

}  // namespace

class TestData : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;

    std::string path(const std::string& name) const {
        return (tmp_.path() + "/").toStdString() + name;
    }
    std::string writeFile(const std::string& name, const std::string& content) const {
        std::string p = path(name);
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        out << content;
        return p;
    }

  private slots:
    void initTestCase() { QVERIFY(tmp_.isValid()); }

    // ---- .npy ----------------------------------------------------------------------------

    void goldenNpy_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<double>("x00");
        QTest::addColumn<double>("yLast");
        QTest::newRow("pd-quadratic-S4")
            << "pd-quadratic-S4" << 60 << 26 << 2.0409191213851825 << -4.061230014051948;
        QTest::newRow("pd-logistic-S5")
            << "pd-logistic-S5" << 50 << 17 << -0.8019314252534474 << 1.0;
        QTest::newRow("localsgd") << "localsgd-quadratic-S4-R4-H2" << 80 << 20
                                  << -0.04731862445049805 << 3.8085795339845614;
        QTest::newRow("filldrain")
            << "filldrain-S4-N6" << 80 << 20 << -0.04731862445049805 << 3.8085795339845614;
    }
    void goldenNpy() {
        QFETCH(QString, name);
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(double, x00);
        QFETCH(double, yLast);
        const std::string dir = goldenDir(name.toStdString());
        Eigen::MatrixXd X = loadNpyMatrix(dir + "/X.npy");
        Eigen::VectorXd y = loadNpyVector(dir + "/y.npy");
        QCOMPARE(X.rows(), Eigen::Index(rows));
        QCOMPARE(X.cols(), Eigen::Index(cols));
        QCOMPARE(y.size(), Eigen::Index(rows));
        QCOMPARE(X(0, 0), x00);  // exact: the bytes are read as they are
        QCOMPARE(y[rows - 1], yLast);
        QVERIFY(X.allFinite() && y.allFinite());
        Dataset data = loadNpyPair(dir + "/X.npy", dir + "/y.npy");
        QCOMPARE(data.X, X);
        QCOMPARE(data.y, y);
        QVERIFY(!data.description.empty());
        if (name.contains("logistic")) {
            for (Eigen::Index i = 0; i < y.size(); ++i) {
                QVERIFY(y[i] == 0.0 || y[i] == 1.0);
            }
        }
    }

    void npyRoundTrip() {
        NumpyRandom rng(7);
        Eigen::MatrixXd m = rng.normalMatrix(13, 5);
        m(2, 3) = 1e-310;  // subnormal and extremes survive bit for bit
        m(4, 1) = -1.7976931348623157e308;
        Eigen::VectorXd v = rng.normalVector(9);
        const std::string mPath = path("m.npy");
        const std::string vPath = path("v.npy");
        saveNpy(mPath, m);
        saveNpy(vPath, v);
        QVERIFY(!std::filesystem::exists(mPath + ".tmp"));
        QCOMPARE(loadNpyMatrix(mPath), m);
        QCOMPARE(loadNpyVector(vPath), v);
        // Data starts on a 64-byte boundary after a v1.0 header.
        QCOMPARE(std::filesystem::file_size(mPath) % 64, std::uintmax_t(13 * 5 * 8) % 64);
        // Overwriting an existing file works (rename replaces it).
        Eigen::MatrixXd m2 = Eigen::MatrixXd::Constant(2, 2, 3.5);
        saveNpy(mPath, m2);
        QCOMPARE(loadNpyMatrix(mPath), m2);
        // An n x 1 matrix is accepted as a vector; a 1-D file is not a matrix.
        Eigen::MatrixXd column = v;
        saveNpy(path("col.npy"), column);
        QCOMPARE(loadNpyVector(path("col.npy")), v);
        EXPECT_THROW_WITH(DataError, loadNpyMatrix(vPath), "v.npy");
    }

    void npyFloat32AndByteOrders() {
        std::vector<float> f = {1.5f, -2.25f, 3.0f, 0.1f, 5.0f, 6.0f};
        const std::string f4 = writeFile(
            "f4.npy",
            npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", rawBytes(f)));
        Eigen::MatrixXd m = loadNpyMatrix(f4);
        QCOMPARE(m.rows(), Eigen::Index(2));
        QCOMPARE(m.cols(), Eigen::Index(3));
        QCOMPARE(m(0, 0), 1.5);
        QCOMPARE(m(0, 1), -2.25);
        QCOMPARE(m(1, 0), static_cast<double>(0.1f));  // C order: row 1 starts at element 3
        QCOMPARE(m(1, 2), 6.0);

        const std::string f4v = writeFile(
            "f4v.npy",
            npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", rawBytes(f)));
        Eigen::VectorXd v = loadNpyVector(f4v);
        QCOMPARE(v.size(), Eigen::Index(6));
        QCOMPARE(v[3], static_cast<double>(0.1f));

        // Big-endian float64, key order changed, double quotes, version 2.0 header.
        std::vector<double> d = {1.0, -2.0, 3.25, 4.5};
        const std::string be = writeFile(
            "be.npy", npyBytes("{\"shape\": (2, 2), \"fortran_order\": False, \"descr\": \">f8\"}",
                               rawBytes(d, true), 2));
        Eigen::MatrixXd b = loadNpyMatrix(be);
        QCOMPARE(b(0, 1), -2.0);
        QCOMPARE(b(1, 0), 3.25);
    }

    void npyMalformed_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<bool>("asVector");
        QTest::addColumn<QString>("needle");
        const std::string data8 = rawBytes(std::vector<double>(6, 1.0));
        auto add = [](const char* row, const std::string& file, const std::string& bytes,
                      bool asVector, const char* needle) {
            QTest::newRow(row) << QString::fromStdString(file)
                               << QByteArray(bytes.data(), static_cast<int>(bytes.size()))
                               << asVector << QString(needle);
        };
        add("bad magic", "magic.npy", "PK\x03\x04 this is a zip file, not npy", false, "magic");
        add("empty file", "empty.npy", "", false, "magic");
        add("truncated data", "trunc.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                     data8.substr(0, 40)),
            false, "truncated");
        add("truncated header", "trunchead.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", "")
                .substr(0, 30),
            false, "truncated");
        add("fortran order", "fortran.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", data8), false,
            "Fortran");
        add("int64", "int.npy",
            npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", data8), false,
            "<i8");
        add("complex", "complex.npy",
            npyBytes("{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }", data8), true,
            "<c16");
        add("structured", "struct.npy",
            npyBytes("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (6,), }", data8),
            true, "structured");
        add("3-D matrix", "cube.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", data8),
            false, "2-D");
        add("2-D vector", "wide.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", data8), true,
            "1-D");
        add("trailing bytes", "long.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", data8), false,
            "unexpected bytes");
        add("garbled header", "garbled.npy", npyBytes("{'descr' '<f8'}", data8), false, "header");
        add("missing shape", "noshape.npy",
            npyBytes("{'descr': '<f8', 'fortran_order': False}", data8), false, "shape");
        add("version 9", "v9.npy", npyBytes("{}", "", 9), false, "version");
    }
    void npyMalformed() {
        QFETCH(QString, name);
        QFETCH(QByteArray, bytes);
        QFETCH(bool, asVector);
        QFETCH(QString, needle);
        const std::string file = name.toStdString();
        const std::string p = writeFile(file, bytes.toStdString());
        const std::string n = needle.toStdString();
        if (asVector) {
            EXPECT_THROW_WITH(DataError, loadNpyVector(p), n);
            EXPECT_THROW_WITH(DataError, loadNpyVector(p), file);
        } else {
            EXPECT_THROW_WITH(DataError, loadNpyMatrix(p), n);
            EXPECT_THROW_WITH(DataError, loadNpyMatrix(p), file);
        }
    }

    void npyMissingAndMismatch() {
        EXPECT_THROW_WITH(DataError, loadNpyMatrix(path("nowhere.npy")), "nowhere.npy");
        EXPECT_THROW_WITH(DataError, loadNpyMatrix(path("nowhere.npy")), "does not exist");
        // The config reader's wording, from the one input-file reader.
        EXPECT_THROW_WITH(DataError, loadNpyVector(path("")), "is a folder, not a file");
        const std::string dir = goldenDir("pd-logistic-S5");
        const std::string other = goldenDir("pd-quadratic-S4");
        EXPECT_THROW_WITH(DataError, loadNpyPair(dir + "/X.npy", other + "/y.npy"),
                          "X has 50 rows, y has 60 entries");
        EXPECT_THROW_WITH(DataError, loadNpyPair(dir + "/X.npy", path("gone_y.npy")), "gone_y.npy");
    }

    void npySaveFailure() {
        EXPECT_THROW_WITH(IoError, saveNpy(path("no/such/dir/out.npy"), Eigen::MatrixXd(2, 2)),
                          "out.npy");
    }

    // ---- CSV -----------------------------------------------------------------------------

    void csvHeaderAndLabelColumn() {
        const std::string content = "a,b,label,c\n1,2,0,3\n4,5.5,1,-6e-1\n\n7,8,1,+9\n";
        const std::string p = writeFile("h.csv", content);
        Dataset last = loadCsv(p);  // header detected, label = last column
        QCOMPARE(last.X.rows(), Eigen::Index(3));
        QCOMPARE(last.X.cols(), Eigen::Index(3));
        QCOMPARE(last.y[1], -0.6);
        QCOMPARE(last.y[2], 9.0);
        QCOMPARE(last.X(1, 2), 1.0);

        Dataset mid = loadCsv(p, 2);
        QCOMPARE(mid.y, (Eigen::VectorXd(3) << 0.0, 1.0, 1.0).finished());
        Eigen::MatrixXd expected(3, 3);
        expected << 1, 2, 3, 4, 5.5, -0.6, 7, 8, 9;
        QCOMPARE(mid.X, expected);

        Dataset firstCol = loadCsv(p, 0);
        QCOMPARE(firstCol.y, (Eigen::VectorXd(3) << 1.0, 4.0, 7.0).finished());
        QCOMPARE(firstCol.X(0, 0), 2.0);

        EXPECT_THROW_WITH(ConfigError, loadCsv(p, 4), "label_column = 4");
        EXPECT_THROW_WITH(ConfigError, loadCsv(p, -2), "label_column = -2");
    }

    void csvNoHeaderCrlfAndPair() {
        const std::string p = writeFile("nh.csv", "1, 2 ,3\r\n4,5,6\r\n");
        Dataset data = loadCsv(p);
        QCOMPARE(data.X.rows(), Eigen::Index(2));
        QCOMPARE(data.X.cols(), Eigen::Index(2));
        QCOMPARE(data.X(0, 1), 2.0);
        QCOMPARE(data.y[1], 6.0);

        const std::string x = writeFile("px.csv", "x1,x2\n1,2\n3,4\n5,6\n");
        const std::string y = writeFile("py.csv", "0\n1\n1\n");
        Dataset pair = loadCsvPair(x, y);
        QCOMPARE(pair.X.cols(), Eigen::Index(2));
        QCOMPARE(pair.X(2, 1), 6.0);
        QCOMPARE(pair.y, (Eigen::VectorXd(3) << 0.0, 1.0, 1.0).finished());

        const std::string y2 = writeFile("py2.csv", "y\n0\n1\n");
        EXPECT_THROW_WITH(DataError, loadCsvPair(x, y2), "X has 3 rows, y has 2 entries");
        const std::string yWide = writeFile("pywide.csv", "0,1\n1,1\n1,0\n");
        EXPECT_THROW_WITH(DataError, loadCsvPair(x, yWide), "pywide.csv");
    }

    void csvMalformed_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("content");
        QTest::addColumn<QString>("needle");
        QTest::newRow("ragged") << "ragged.csv"
                                << "1,2,3\n4,5\n"
                                << "line 2";
        QTest::newRow("ragged after header") << "ragged2.csv"
                                             << "a,b\n1,2\n3,4,5\n"
                                             << "line 3";
        QTest::newRow("non-numeric") << "word.csv"
                                     << "1,2,3\n4,abc,6\n"
                                     << "line 2, column 2";
        QTest::newRow("empty cell") << "emptycell.csv"
                                    << "1,2,3\n4,,6\n"
                                    << "column 2";
        QTest::newRow("nan") << "nan.csv"
                             << "1,2\nnan,3\n"
                             << "line 2, column 1";
        QTest::newRow("only header") << "header.csv"
                                     << "a,b,c\n"
                                     << "no data rows";
        QTest::newRow("empty") << "nothing.csv"
                               << ""
                               << "no data rows";
        QTest::newRow("one column") << "single.csv"
                                    << "1\n2\n"
                                    << "at least 2";
    }
    void csvMalformed() {
        QFETCH(QString, name);
        QFETCH(QString, content);
        QFETCH(QString, needle);
        const std::string p = writeFile(name.toStdString(), content.toStdString());
        EXPECT_THROW_WITH(DataError, loadCsv(p), needle.toStdString());
        EXPECT_THROW_WITH(DataError, loadCsv(p), name.toStdString());
    }

    void csvMissing() {
        EXPECT_THROW_WITH(DataError, loadCsv(path("absent.csv")), "absent.csv");
        EXPECT_THROW_WITH(DataError, loadCsvPair(path("absent_x.csv"), path("absent_y.csv")),
                          "absent_x.csv");
    }

    // ---- LIBSVM --------------------------------------------------------------------------

    void libsvmSparse() {
        const std::string p = writeFile("a.svm",
                                        "# a comment line\n"
                                        "+1 1:0.5 4:-2\n"
                                        "-1 2:3   # trailing comment\n"
                                        "\n"
                                        "-1\n"
                                        "1 4:1e-3 3:7\n");
        Dataset data = loadLibsvm(p);
        QCOMPARE(data.X.rows(), Eigen::Index(4));
        QCOMPARE(data.X.cols(), Eigen::Index(4));
        Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(4, 4);
        expected(0, 0) = 0.5;
        expected(0, 3) = -2.0;
        expected(1, 1) = 3.0;
        expected(3, 3) = 1e-3;
        expected(3, 2) = 7.0;
        QCOMPARE(data.X, expected);
        QCOMPARE(data.y, (Eigen::VectorXd(4) << 1.0, 0.0, 0.0, 1.0).finished());

        Dataset wide = loadLibsvm(p, 10);
        QCOMPARE(wide.X.cols(), Eigen::Index(10));
        QCOMPARE(wide.X.leftCols(4), expected);
        QVERIFY(wide.X.rightCols(6).isZero(0.0));
        EXPECT_THROW_WITH(DataError, loadLibsvm(p, 3), "exceeds dim = 3");
        EXPECT_THROW_WITH(ConfigError, loadLibsvm(p, -1), "dim = -1");
    }

    void libsvmLabels() {
        Dataset zeroOne = loadLibsvm(writeFile("01.svm", "0 1:1\n1 2:1\n1 1:2\n"));
        QCOMPARE(zeroOne.y, (Eigen::VectorXd(3) << 0.0, 1.0, 1.0).finished());
        Dataset twoValues = loadLibsvm(writeFile("27.svm", "7 1:1\n2 2:1\n7 1:2\n"));
        QCOMPARE(twoValues.y, (Eigen::VectorXd(3) << 1.0, 0.0, 1.0).finished());
        Dataset onlyMinus = loadLibsvm(writeFile("m.svm", "-1 1:1\n-1 2:1\n"));
        QCOMPARE(onlyMinus.y, Eigen::VectorXd::Zero(2));
        EXPECT_THROW_WITH(DataError, loadLibsvm(writeFile("three.svm", "1 1:1\n2 1:1\n3 1:1\n")),
                          "three.svm");
        EXPECT_THROW_WITH(DataError, loadLibsvm(writeFile("three.svm", "1 1:1\n2 1:1\n3 1:1\n")),
                          "3 distinct labels");
    }

    void libsvmMalformed_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("content");
        QTest::addColumn<QString>("needle");
        QTest::newRow("no colon") << "nocolon.svm"
                                  << "1 1:1\n-1 2 3\n"
                                  << "line 2";
        QTest::newRow("word index") << "word.svm"
                                    << "1 x:1\n"
                                    << "bad token 'x:1'";
        QTest::newRow("zero index") << "zero.svm"
                                    << "1 0:1\n"
                                    << "bad token '0:1'";
        QTest::newRow("bad value") << "value.svm"
                                   << "1 1:abc\n"
                                   << "bad token '1:abc'";
        QTest::newRow("bad label") << "label.svm"
                                   << "yes 1:1\n"
                                   << "label 'yes'";
        QTest::newRow("duplicate") << "dup.svm"
                                   << "1 2:1 2:3\n"
                                   << "appears twice";
        QTest::newRow("empty") << "empty.svm"
                               << "# nothing\n"
                               << "no data rows";
        QTest::newRow("labels only") << "labels.svm"
                                     << "1\n-1\n"
                                     << "no features";
    }
    void libsvmMalformed() {
        QFETCH(QString, name);
        QFETCH(QString, content);
        QFETCH(QString, needle);
        const std::string p = writeFile(name.toStdString(), content.toStdString());
        EXPECT_THROW_WITH(DataError, loadLibsvm(p), needle.toStdString());
        EXPECT_THROW_WITH(DataError, loadLibsvm(p), name.toStdString());
        EXPECT_THROW_WITH(DataError, loadLibsvm(path("missing.svm")), "missing.svm");
    }

    // ---- hardened inputs (issue 7) ---------------------------------------------------------

    // 15 bytes asking for a dense 1 x 2147483647 matrix (16 GiB): refused before allocating,
    // with the size it needs, never a bare std::bad_alloc.
    void libsvmHugeIndexRefusedWithSize() {
        const std::string p = writeFile("huge.svm", "1 2147483647:1\n");
        qputenv("PIPELENS_MEMORY_LIMIT", "1G");
        EXPECT_THROW_WITH(ResourceError, loadLibsvm(p), "needs about 16.0 GiB");
        EXPECT_THROW_WITH(ResourceError, loadLibsvm(p), "huge.svm");
        EXPECT_THROW_WITH(ResourceError, loadLibsvm(p), "1.0 GiB available");
        qunsetenv("PIPELENS_MEMORY_LIMIT");
    }

    void memoryLimitFromEnvironment() {
        qputenv("PIPELENS_MEMORY_LIMIT", "512M");
        QCOMPARE(memoryLimitBytes(), std::uint64_t{512} << 20);
        qputenv("PIPELENS_MEMORY_LIMIT", "lots");
        EXPECT_THROW_WITH(ConfigError, memoryLimitBytes(), "PIPELENS_MEMORY_LIMIT");
        qunsetenv("PIPELENS_MEMORY_LIMIT");
        QVERIFY(memoryLimitBytes() > (std::uint64_t{64} << 20));
        QCOMPARE(formatBytes(3ull << 30), std::string("3.0 GiB"));
        QCOMPARE(bytesFor(1ull << 40, 1ull << 40), UINT64_MAX);
    }

    // Shape (0, 10^11) used to pass the size check (skipped once an extent is 0).
    void npyEmptyOrHugeExtentRefused() {
        const std::string empty =
            writeFile("empty.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, "
                                            "'shape': (0, 100000000000), }",
                                            ""));
        EXPECT_THROW_WITH(DataError, loadNpyMatrix(empty), "extent above 2147483647");
        const std::string zero =
            writeFile("zero.npy",
                      npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", ""));
        EXPECT_THROW_WITH(DataError, loadNpyMatrix(zero), "is empty");
    }

    // Old Mac files end lines with a lone CR: they used to read as one line, "no data rows".
    void csvCrOnlyLineEndings() {
        const std::string p = writeFile("cr.csv", "a,b,c\r1,2,3\r4,5,6\r");
        Dataset data = loadCsv(p);
        QCOMPARE(data.X.rows(), Eigen::Index(2));
        QCOMPARE(data.X(1, 1), 5.0);
        QCOMPARE(data.y[1], 6.0);
        const std::string svm = writeFile("cr.svm", "1 1:2\r-1 2:3\r");
        QCOMPARE(loadLibsvm(svm).X.rows(), Eigen::Index(2));
    }

    // Bytes of a bad file are quoted escaped: an escape sequence must never reach a terminal.
    void badBytesAreEscapedInMessages() {
        const std::string csv = writeFile("esc.csv", "1,2\n3,\x1b[2J\xff\n");
        const std::string svm = writeFile("esc.svm", "1 1:\x1b]0;owned\x07\n");
        const std::string npy = writeFile(
            "esc.npy",
            npyBytes("{'descr': '\x1b[31m', 'fortran_order': False, 'shape': (1,), }", "12345678"));
        for (const auto& load : {std::function<void()>([&] { loadCsv(csv); }),
                                 std::function<void()>([&] { loadLibsvm(svm); }),
                                 std::function<void()>([&] { loadNpyVector(npy); })}) {
            try {
                load();
                QFAIL("expected a DataError");
            } catch (const DataError& e) {
                const std::string m = e.what();
                QVERIFY2(m.find('\x1b') == std::string::npos, m.c_str());
                QVERIFY2(m.find("\\x1b") != std::string::npos, m.c_str());
            }
        }
    }

    // The in-memory readers the fuzz targets drive agree with the file readers.
    void inMemoryReadersMatchFiles() {
        const std::string csvText = "x,y,label\n1,2,0\n3,4,1\n";
        QCOMPARE(parseCsv(csvText, "mem.csv").X, loadCsv(writeFile("mem.csv", csvText)).X);
        const std::string svmText = "1 1:0.5 3:2\n-1 2:1\n";
        QCOMPARE(parseLibsvm(svmText, "mem.svm").X, loadLibsvm(writeFile("mem.svm", svmText)).X);
        const std::string npy =
            npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
                     rawBytes(std::vector<double>{1.5, -2.0}));
        QCOMPARE(parseNpyMatrix(npy, "mem.npy"), loadNpyMatrix(writeFile("mem.npy", npy)));
        // A shape check refuses before the data is read.
        EXPECT_THROW_WITH(ResourceError,
                          parseNpyMatrix(npy, "mem.npy",
                                         [](std::int64_t, std::int64_t) {
                                             throw ResourceError("refused by the check");
                                         }),
                          "refused by the check");
    }

    // ---- synthetic -----------------------------------------------------------------------

    void syntheticDeterministic_data() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("random") << "random";
        QTest::newRow("simple") << "simple";
        QTest::newRow("tridiagonal") << "tridiagonal";
        QTest::newRow("logistic") << "logistic";
    }
    void syntheticDeterministic() {
        QFETCH(QString, kind);
        SyntheticSpec spec;
        spec.kind = kind.toStdString();
        spec.rows = 40;
        spec.dim = 12;
        spec.seed = 42;
        Dataset a = makeSynthetic(spec);
        Dataset b = makeSynthetic(spec);
        QCOMPARE(a.X.rows(), Eigen::Index(40));
        QCOMPARE(a.X.cols(), Eigen::Index(12));
        QCOMPARE(a.y.size(), Eigen::Index(40));
        QCOMPARE(a.X, b.X);
        QCOMPARE(a.y, b.y);
        QVERIFY(!a.description.empty());
        QVERIFY(a.X.allFinite() && a.y.allFinite());
        spec.seed = 43;
        Dataset c = makeSynthetic(spec);
        QVERIFY((a.X - c.X).norm() > 1e-3);
        if (spec.kind != "logistic") {
            // Noise-free labels are exactly linear in X; noise changes y only.
            Eigen::VectorXd w = a.X.completeOrthogonalDecomposition().solve(a.y);
            QVERIFY((a.X * w - a.y).norm() < 1e-8 * a.y.norm());
            spec.seed = 42;
            spec.labelNoise = 0.5;
            Dataset noisy = makeSynthetic(spec);
            QCOMPARE(noisy.X, a.X);
            QVERIFY((noisy.y - a.y).norm() > 0.1);
        }
    }

    void syntheticMatchesNumpy() {
        // Cases made by scripts/make_random_vectors.py from np.random.default_rng(seed) in the
        // authors' order: X exactly; y = X w_true agrees to rounding (BLAS sums in another
        // order), the logistic labels and the label noise exactly.
        std::ifstream in(std::string(PIPELENS_SOURCE_DIR) + "/tests/data/random/synthetic.json");
        QVERIFY(in.good());
        const nlohmann::json vectors = nlohmann::json::parse(in);
        const auto hexes = [](const nlohmann::json& values) {
            std::vector<double> out;
            for (const auto& v : values) {
                out.push_back(std::strtod(v.get<std::string>().c_str(), nullptr));
            }
            return out;
        };
        QVERIFY(vectors["cases"].size() >= 4);
        for (const auto& c : vectors["cases"]) {
            SyntheticSpec spec;
            spec.kind = c["kind"].get<std::string>();
            spec.rows = c["rows"].get<int>();
            spec.dim = c["dim"].get<int>();
            spec.seed = c["seed"].get<std::uint64_t>();
            spec.labelNoise = c["label_noise"].get<double>();
            const Dataset data = makeSynthetic(spec);
            const std::vector<double> X = hexes(c["X"]);
            const std::vector<double> y = hexes(c["y"]);
            QCOMPARE(std::size_t(data.X.size()), X.size());
            QCOMPARE(std::size_t(data.y.size()), y.size());
            for (Eigen::Index i = 0; i < data.X.rows(); ++i) {
                for (Eigen::Index j = 0; j < data.X.cols(); ++j) {
                    QCOMPARE(data.X(i, j), X[std::size_t(i * data.X.cols() + j)]);
                }
            }
            for (Eigen::Index i = 0; i < data.y.size(); ++i) {
                const double want = y[std::size_t(i)];
                if (spec.kind == "logistic") {
                    QCOMPARE(data.y[i], want);
                } else {
                    QVERIFY2(std::abs(data.y[i] - want) <= 1e-13 * (1.0 + std::abs(want)),
                             qPrintable(QString("%1 seed %2: y[%3] = %4, NumPy %5")
                                            .arg(QString::fromStdString(spec.kind))
                                            .arg(spec.seed)
                                            .arg(i)
                                            .arg(data.y[i], 0, 'g', 17)
                                            .arg(want, 0, 'g', 17)));
                }
            }
        }
    }

    void syntheticRandomFirstRowsStable() {
        // Rows are drawn one after another, so a larger n extends a smaller one.
        SyntheticSpec spec;
        spec.rows = 10;
        spec.dim = 4;
        spec.seed = 3;
        Dataset small = makeSynthetic(spec);
        spec.rows = 30;
        Dataset large = makeSynthetic(spec);
        QCOMPARE(Eigen::MatrixXd(large.X.topRows(10)), small.X);
    }

    void syntheticTridiagonal_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::addColumn<double>("kappa");
        QTest::newRow("default mu") << 100 << 20 << 0.0;
        QTest::newRow("kappa 10") << 60 << 30 << 10.0;
        QTest::newRow("kappa 1e4") << 200 << 40 << 1e4;
        QTest::newRow("square kappa 1e6 (mu < 0)") << 50 << 50 << 1e6;
        QTest::newRow("d = 2") << 5 << 2 << 3.0;
    }
    void syntheticTridiagonal() {
        QFETCH(int, rows);
        QFETCH(int, dim);
        QFETCH(double, kappa);
        SyntheticSpec spec;
        spec.kind = "tridiagonal";
        spec.rows = rows;
        spec.dim = dim;
        spec.seed = 5;
        spec.conditionNumber = kappa;
        Dataset data = makeSynthetic(spec);
        const double mu = kappa > 0.0 ? tridiagonalShiftForCondition(dim, kappa) : 0.01;
        Eigen::MatrixXd A = Eigen::MatrixXd::Zero(dim, dim);
        for (int i = 0; i < dim; ++i) {
            A(i, i) = 2.0 + mu;
            if (i + 1 < dim) {
                A(i, i + 1) = A(i + 1, i) = -1.0;
            }
        }
        const double err = (gram(data.X) - A).cwiseAbs().maxCoeff();
        QVERIFY2(err < 1e-10, qPrintable(QString("max |X^T X/n - A| = %1").arg(err)));
        if (kappa > 0.0) {
            Eigen::VectorXd ev = gramEigenvalues(data.X);
            const double cond = ev[dim - 1] / ev[0];
            QVERIFY2(std::abs(cond - kappa) <= 1e-8 * kappa,
                     qPrintable(QString("cond = %1, wanted %2").arg(cond, 0, 'g', 17).arg(kappa)));
        }
        // The closed-form eigenvalues of T match a numerical decomposition.
        Eigen::MatrixXd T = A - mu * Eigen::MatrixXd::Identity(dim, dim);
        Eigen::VectorXd tev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(T).eigenvalues();
        for (int k = 1; k <= dim; ++k) {
            QVERIFY(std::abs(tev[k - 1] - tridiagonalEigenvalue(dim, k)) < 1e-12);
        }
    }

    void syntheticSimpleSpectrum_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::newRow("tall") << 80 << 15;
        QTest::newRow("wide") << 12 << 30;
        QTest::newRow("square") << 20 << 20;
        QTest::newRow("one column") << 9 << 1;
    }
    void syntheticSimpleSpectrum() {
        QFETCH(int, rows);
        QFETCH(int, dim);
        SyntheticSpec spec;
        spec.kind = "simple";
        spec.rows = rows;
        spec.dim = dim;
        spec.seed = 11;
        Dataset data = makeSynthetic(spec);
        const int r = std::min(rows, dim);
        Eigen::VectorXd ev = gramEigenvalues(data.X);  // ascending, d of them
        for (int k = 0; k < dim - r; ++k) {
            QVERIFY(std::abs(ev[k]) < 1e-10);
        }
        for (int k = 0; k < r; ++k) {
            QVERIFY2(
                std::abs(ev[dim - r + k] - (k + 1.0)) < 1e-10 * r,
                qPrintable(QString("eigenvalue %1 = %2").arg(k).arg(ev[dim - r + k], 0, 'g', 17)));
        }
    }

    void syntheticLogistic() {
        SyntheticSpec spec;
        spec.kind = "logistic";
        spec.rows = 500;
        spec.dim = 5;
        spec.seed = 9;
        Dataset data = makeSynthetic(spec);
        int ones = 0;
        for (Eigen::Index i = 0; i < data.y.size(); ++i) {
            QVERIFY(data.y[i] == 0.0 || data.y[i] == 1.0);
            ones += data.y[i] == 1.0 ? 1 : 0;
        }
        QVERIFY(ones > 50 && ones < 450);
    }

    void syntheticBadSpecs_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("dim");
        QTest::addColumn<double>("noise");
        QTest::addColumn<double>("mu");
        QTest::addColumn<double>("kappa");
        QTest::addColumn<QString>("needle");
        QTest::newRow("kind") << "gaussian" << 10 << 3 << 0.0 << 0.01 << 0.0
                              << "kind = \"gaussian\"";
        QTest::newRow("rows") << "random" << 0 << 3 << 0.0 << 0.01 << 0.0 << "rows = 0";
        QTest::newRow("dim") << "simple" << 10 << -2 << 0.0 << 0.01 << 0.0 << "dim = -2";
        QTest::newRow("tridiagonal rows < dim")
            << "tridiagonal" << 5 << 8 << 0.0 << 0.01 << 0.0 << "rows >= dim = 8";
        QTest::newRow("kappa 1") << "tridiagonal" << 10 << 3 << 0.0 << 0.01 << 1.0
                                 << "condition_number = 1";
        QTest::newRow("kappa 0.5")
            << "random" << 10 << 3 << 0.0 << 0.01 << 0.5 << "condition_number = 0.5";
        QTest::newRow("kappa with d 1")
            << "tridiagonal" << 10 << 1 << 0.0 << 0.01 << 5.0 << "condition_number = 5";
        QTest::newRow("noise") << "random" << 10 << 3 << -1.0 << 0.01 << 0.0 << "label_noise = -1";
        QTest::newRow("mu") << "tridiagonal" << 10 << 3 << 0.0 << -5.0 << 0.0 << "mu = -5";
    }
    void syntheticBadSpecs() {
        QFETCH(QString, kind);
        QFETCH(int, rows);
        QFETCH(int, dim);
        QFETCH(double, noise);
        QFETCH(double, mu);
        QFETCH(double, kappa);
        QFETCH(QString, needle);
        SyntheticSpec spec;
        spec.kind = kind.toStdString();
        spec.rows = rows;
        spec.dim = dim;
        spec.labelNoise = noise;
        spec.mu = mu;
        spec.conditionNumber = kappa;
        EXPECT_THROW_WITH(ConfigError, makeSynthetic(spec), needle.toStdString());
        EXPECT_THROW_WITH(ConfigError, makeSynthetic(spec), "is not allowed");
    }
};

QTEST_APPLESS_MAIN(TestData)
#include "tst_data.moc"
