#include "schedule/delay_units.hpp"

#include <algorithm>
#include <vector>

#include "util/csv_writer.hpp"

namespace pipelens {
namespace {

constexpr std::array<DelayUnit, 3> kUnits{DelayUnit::BlockUpdates, DelayUnit::OptimizerSteps,
                                          DelayUnit::Slots};

// Walks updates [0, rows) with each unit's delays of every block, in O(K S): where each block
// update is a step of its block, block j's updates before k are counted along the way instead
// of searched.
template <typename Visit>
void walkDelays(const DelayTable& d, long long rows, Visit&& visit) {
    const int S = d.stages();
    const bool counted = d.stepMicrobatches() == 0;
    std::vector<long long> before(static_cast<size_t>(S), 0);
    std::array<std::vector<long long>, 3> values;
    for (auto& v : values) v.resize(static_cast<size_t>(S));
    for (long long k = 0; k < rows; ++k) {
        const BlockUpdateInfo& u = d.update(k);
        for (int j = 0; j < S; ++j) {
            const auto i = static_cast<size_t>(j);
            values[0][i] = d.delay(k, j);
            values[1][i] = counted ? before[i] - d.versionRead(u.microbatch, j)
                                   : d.groupStepsDelay(u.microbatch, j);
            values[2][i] = d.delaySlots(k, j);
        }
        visit(k, u, values);
        ++before[static_cast<size_t>(u.stage)];
    }
}

}  // namespace

std::string delayUnitsCsv(const DelayTable& d, const std::string& method, long long rows) {
    const long long n = rows < 0 ? d.updates() : std::min(rows, d.updates());
    CsvWriter out;
    out.plain("method,block_update,updated_stage,microbatch,slot");
    for (const DelayUnit unit : kUnits) {
        for (int j = 1; j <= d.stages(); ++j)
            out.plain(std::string(enumName(kDelayUnits, unit)) + "_block" + std::to_string(j));
    }
    out.endRow();
    walkDelays(d, n, [&](long long k, const BlockUpdateInfo& u, const auto& values) {
        out.label(method).integer(k).integer(u.stage + 1).integer(u.microbatch).integer(u.slot);
        for (const auto& unit : values) {
            for (const long long v : unit) out.integer(v);
        }
        out.endRow();
    });
    return out.take();
}

std::array<long long, 3> maxDelayByUnit(const DelayTable& d) {
    std::array<long long, 3> best{0, 0, 0};
    walkDelays(d, d.updates(), [&](long long, const BlockUpdateInfo&, const auto& values) {
        for (size_t u = 0; u < values.size(); ++u)
            best[u] = std::max(best[u], *std::max_element(values[u].begin(), values[u].end()));
    });
    return best;
}

}  // namespace pipelens
