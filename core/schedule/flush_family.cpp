// The flushing family's checks, closed forms and program building (flush_family.hpp). Each
// family's order lives in its own file; this one times an order with unit costs and writes it
// into the grid.
#include "schedule/flush_family.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

#include "errors.hpp"
#include "limits.hpp"
#include "schedule/program_timing_detail.hpp"

namespace pipelens {
namespace {

std::string kindText(const FlushScheduleParams& p) {
    return flushKindName(p.kind);
}

}  // namespace

void validateFlushScheduleParams(const FlushScheduleParams& p) {
    const std::string kind = kindText(p);
    if (p.devices < 1 || p.devices > kMaxStages) {
        throw ConfigError(kind + ": stages = " + std::to_string(p.devices) + "; allowed 1 to " +
                          std::to_string(kMaxStages));
    }
    if (p.microbatches < 1) {
        throw ConfigError(kind + ": microbatches = " + std::to_string(p.microbatches) +
                          "; must be at least 1");
    }
    if (p.kind == FlushKind::Interleaved) {
        if (p.virtualStages < 2) {
            throw ConfigError("interleaved needs virtual_stages >= 2; got virtual_stages = " +
                              std::to_string(p.virtualStages) + " (1 is 1f1b)");
        }
        if (p.microbatches % p.devices != 0) {
            throw ConfigError(
                "virtual_stages = " + std::to_string(p.virtualStages) +
                " needs microbatches a multiple of stages = " + std::to_string(p.devices) +
                "; got microbatches = " + std::to_string(p.microbatches));
        }
    } else if (p.virtualStages != 1) {
        throw ConfigError(kind + ": virtual_stages = " + std::to_string(p.virtualStages) +
                          "; only interleaved has virtual stages, " + kind + " needs 1");
    }
    // Each factor is at most kMaxFlushCells before the product is formed, so it cannot overflow.
    if (p.microbatches > kMaxFlushCells || p.virtualStages > kMaxFlushCells ||
        static_cast<long long>(p.devices) * flushLengthFormula(p) > kMaxFlushCells) {
        throw ConfigError(kind + ": stages = " + std::to_string(p.devices) +
                          ", microbatches = " + std::to_string(p.microbatches) +
                          ", virtual_stages = " + std::to_string(p.virtualStages) +
                          " make a grid of more than " + std::to_string(kMaxFlushCells) +
                          " cells (stages × flush length); use fewer");
    }
}

long long flushLengthFormula(const FlushScheduleParams& p) {
    const long long s = p.devices;
    const long long m = p.microbatches;
    switch (p.kind) {
        case FlushKind::GPipe:
        case FlushKind::OneFOneB:
            return 2 * (m + s - 1);
        case FlushKind::Interleaved:
            return 2 * (static_cast<long long>(p.virtualStages) * m + s - 1);
        case FlushKind::ZeroBubbleH1:
            // The last stage starts at S − 1 and runs 3M ops; the first stage's first I waits
            // for a chain of S forwards and S − 1 input gradients (2S − 1 steps) and all its
            // 2M I and W come after it. The order reaches the larger bound (tst_flush_family).
            return std::max(3 * m + s - 1, 2 * m + 2 * s - 1);
    }
    return 0;
}

double flushBubbleFormula(const FlushScheduleParams& p) {
    // Every rank runs 2 ops per microbatch and chunk (F and B), 3 for ZB-H1 (F, I and W).
    const long long perRank = p.kind == FlushKind::ZeroBubbleH1
                                  ? 3LL * p.microbatches
                                  : 2LL * p.microbatches * p.virtualStages;
    const long long length = flushLengthFormula(p);
    return length > 0 ? 1.0 - static_cast<double>(perRank) / static_cast<double>(length) : 0.0;
}

PipelineProgram orderProgram(const RankOrders& order) {
    PipelineProgram program;
    program.orderOnly = true;
    program.ranks.resize(order.size());
    for (std::size_t r = 0; r < order.size(); ++r) {
        program.ranks[r].reserve(order[r].size());
        for (const Action& a : order[r]) {
            ProgramStep step;
            step.actions[0] = a;
            step.count = 1;
            program.ranks[r].push_back(step);
        }
    }
    return program;
}

PipelineProgram buildFlushProgram(const FlushScheduleParams& p) {
    validateFlushScheduleParams(p);
    RankOrders order;
    switch (p.kind) {
        case FlushKind::GPipe:
            order = gpipeOrder(p.devices, p.microbatches);
            break;
        case FlushKind::OneFOneB:
            order = oneFOneBOrder(p.devices, p.microbatches);
            break;
        case FlushKind::Interleaved:
            order = interleavedOrder(p.devices, p.microbatches, p.virtualStages);
            break;
        case FlushKind::ZeroBubbleH1:
            order = zeroBubbleH1Order(p.devices, p.microbatches);
            break;
    }
    // timeProgram(orderProgram(order)) with unit costs (detail::timeOrder: the same routine),
    // without the copy into a program or the sorted list of timed actions: each action goes from
    // its start straight into its cell.
    detail::OrderStarts timing;
    detail::timeOrder(order, ActionCosts{}, timing);
    PipelineProgram program;
    program.ranks.resize(order.size());
    const auto length = static_cast<std::size_t>(timing.length);
    std::size_t index = 0;
    for (std::size_t r = 0; r < order.size(); ++r) {
        std::vector<ProgramStep>& row = program.ranks[r];
        row.resize(length);
        for (const Action& a : order[r]) {
            ProgramStep& step = row[static_cast<std::size_t>(timing.starts[index++])];
            step.actions[0] = a;
            step.count = 1;
        }
        // Handing each order row back once written lets the allocator give its memory to the
        // next grid rows instead of fresh pages (page faults were a third of the build's time).
        std::vector<Action>().swap(order[r]);
    }
    return program;
}

}  // namespace pipelens
