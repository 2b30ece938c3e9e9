// addBlockProduct (the replay's incremental X*w update) against Eigen's product it replaces:
// the same bits, for every column grouping Eigen uses and row counts that leave a tail.
#include <QtTest>

#include <cstring>

#include "compute/block_product.hpp"

using namespace pipelens;

class TestBlockProduct : public QObject {
    Q_OBJECT

  private slots:
    void bitIdenticalToEigen() {
        struct Shape {
            Eigen::Index rows, cols, offset, size;
        };
        // size < 128 (one group); >= 128 with n < 4000 (groups of 16) and n >= 4000 (of 4);
        // row counts that are not multiples of 16.
        const Shape shapes[] = {{600, 512, 16, 16},  {601, 64, 3, 61},    {37, 300, 0, 300},
                                {250, 200, 40, 130}, {4001, 140, 1, 139}, {5, 3, 1, 2}};
        std::srand(7);
        for (const Shape& s : shapes) {
            const Eigen::MatrixXd X = Eigen::MatrixXd::Random(s.rows, s.cols) * 3.0;
            const Eigen::VectorXd v = Eigen::VectorXd::Random(s.size) * 1e-3;
            const Eigen::VectorXd z0 = Eigen::VectorXd::Random(s.rows) * 10.0;
            Eigen::VectorXd expected = z0;
            expected.noalias() += X.middleCols(s.offset, s.size) * v;
            Eigen::VectorXd got = z0;
            addBlockProduct(X, s.offset, s.size, v, got);
            QVERIFY(std::memcmp(got.data(), expected.data(), sizeof(double) * s.rows) == 0);
            QVERIFY(got != z0);  // it did add something
        }
    }
};

QTEST_APPLESS_MAIN(TestBlockProduct)
#include "tst_block_product.moc"
