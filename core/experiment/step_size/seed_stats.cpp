#include "experiment/step_size/seed_stats.hpp"

#include <cmath>
#include <limits>

namespace pipelens {

MeanSd meanAndSd(std::span<const double> values) {
    MeanSd r;
    if (values.empty()) return r;
    const auto n = static_cast<double>(values.size());
    for (double v : values) r.mean += v;
    r.mean /= n;
    if (!std::isfinite(r.mean)) {
        r.sd = std::numeric_limits<double>::quiet_NaN();
        return r;
    }
    double var = 0.0;
    for (double v : values) var += (v - r.mean) * (v - r.mean);
    r.sd = std::sqrt(var / n);
    return r;
}

CurveStats curveMeanAndSd(std::span<const std::vector<double>> curves, std::size_t length) {
    CurveStats s;
    s.mean.resize(length);
    s.sd.resize(length);
    std::vector<double> column(curves.size());
    for (std::size_t i = 0; i < length; ++i) {
        for (std::size_t c = 0; c < curves.size(); ++c) {
            column[c] =
                i < curves[c].size() ? curves[c][i] : std::numeric_limits<double>::infinity();
        }
        const MeanSd m = meanAndSd(column);
        s.mean[i] = m.mean;
        s.sd[i] = m.sd;
    }
    return s;
}

}  // namespace pipelens
