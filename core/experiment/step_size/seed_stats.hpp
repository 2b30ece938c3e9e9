#pragma once
// Mean and standard deviation over seeds (SPEC section 6 "Seeds"): of final values, and of
// curves point by point. Standard deviations are the population form (ddof = 0, NumPy's
// default), so one seed gives 0.
#include <span>
#include <vector>

namespace pipelens {

struct MeanSd {
    double mean = 0.0;
    double sd = 0.0;
};

MeanSd meanAndSd(std::span<const double> values);

struct CurveStats {
    std::vector<double> mean;
    std::vector<double> sd;
};

// Point by point over curves of `length` points. A curve shorter than `length` (a run that
// diverged and stopped) counts as +inf from its end on, so the mean shows the divergence.
CurveStats curveMeanAndSd(std::span<const std::vector<double>> curves, std::size_t length);

}  // namespace pipelens
