#include "experiment/run/run_work.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

namespace pipelens {

double estimatedDataEntries(const ExperimentConfig& c) {
    if (c.data.source == DataSource::Synthetic) {
        return static_cast<double>(c.data.rows) * static_cast<double>(c.data.dim);
    }
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(resolveDataPath(c, c.data.x), ec);
    return ec ? 0.0 : static_cast<double>(bytes) / 8.0;
}

double estimatedRunMicrobatches(const ExperimentConfig& c) {
    const BudgetSpec& b = c.budget;
    if (b.totalSlots > 0) {
        const int perMicrobatch = std::max(1, c.costs.forwardSlots + c.costs.backwardSlots);
        return static_cast<double>(b.totalSlots) / perMicrobatch;
    }
    if (b.microbatches > 0) return b.microbatches;
    if (c.data.source != DataSource::Synthetic || c.batchSize <= 0)
        return b.epochs;  // n unknown: one per epoch
    return std::round(b.epochs * std::floor(static_cast<double>(c.data.rows) / c.batchSize));
}

double estimatedRunWork(const ExperimentConfig& c) {
    return estimatedDataEntries(c) * std::max(0.0, estimatedRunMicrobatches(c));
}

}  // namespace pipelens
