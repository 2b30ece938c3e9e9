#include "compute/block_product.hpp"

#include <algorithm>
#include <cstring>

namespace pipelens {

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void addBlockProduct(const Eigen::MatrixXd& X, Eigen::Index offset, Eigen::Index size,
                     const Eigen::VectorXd& v, Eigen::VectorXd& z) {
    using Eigen::Index;
    const Index n = X.rows();
    // Eigen's heuristic (GeneralMatrixVector.h, block_cols), so the sums group the same way.
    const Index groupCols =
        size < 128 ? size : (n * static_cast<Index>(sizeof(double)) < 32000 ? 16 : 4);
    const double* base = X.data() + offset * n;
    const double* w = v.data();
    double* out = z.data();
    // 16 rows per pass in four 4-wide vectors that stay in registers across the columns (GCC
    // vector extensions: element by element, so the roundings are those of the scalar code).
    using V4 = double __attribute__((vector_size(32)));
    constexpr Index kRows = 16;
    for (Index j2 = 0; j2 < size; j2 += groupCols) {
        const Index jend = std::min(j2 + groupCols, size);
        Index i0 = 0;
        for (; i0 + kRows <= n; i0 += kRows) {
            V4 a0 = {}, a1 = {}, a2 = {}, a3 = {};
            for (Index j = j2; j < jend; ++j) {
                const double* col = base + j * n + i0;
                const V4 wj = {w[j], w[j], w[j], w[j]};
                V4 x0, x1, x2, x3;
                std::memcpy(&x0, col, sizeof x0);
                std::memcpy(&x1, col + 4, sizeof x1);
                std::memcpy(&x2, col + 8, sizeof x2);
                std::memcpy(&x3, col + 12, sizeof x3);
                a0 += x0 * wj;
                a1 += x1 * wj;
                a2 += x2 * wj;
                a3 += x3 * wj;
            }
            V4 z0, z1, z2, z3;
            std::memcpy(&z0, out + i0, sizeof z0);
            std::memcpy(&z1, out + i0 + 4, sizeof z1);
            std::memcpy(&z2, out + i0 + 8, sizeof z2);
            std::memcpy(&z3, out + i0 + 12, sizeof z3);
            z0 += a0;
            z1 += a1;
            z2 += a2;
            z3 += a3;
            std::memcpy(out + i0, &z0, sizeof z0);
            std::memcpy(out + i0 + 4, &z1, sizeof z1);
            std::memcpy(out + i0 + 8, &z2, sizeof z2);
            std::memcpy(out + i0 + 12, &z3, sizeof z3);
        }
        for (; i0 < n; ++i0) {
            double acc = 0.0;
            for (Index j = j2; j < jend; ++j) acc += base[j * n + i0] * w[j];
            out[i0] += acc;
        }
    }
}

}  // namespace pipelens
