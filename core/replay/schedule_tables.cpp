#include "replay/schedule_tables.hpp"

#include <algorithm>
#include <cstddef>

#include "util/text_builder.hpp"

namespace pipelens {

std::string ganttTableCsv(const Timeline& tl, const DelayTable* delays,
                          const std::string& method) {
    const ScheduleParams& p = tl.params;
    const bool localSgd = p.kind == ScheduleKind::LocalSgd && p.replicas > 0;
    const int roundLength = std::max(1, p.replicas * p.localSteps);
    TextBuilder out;
    out << "method,slot,end_slot,stage,op,microbatch,version_read,replica,round\n";
    // Averagings interleave with the cells: one after the last cell that starts in its slot.
    std::size_t nextAverage = 0;
    auto writeAveragesBefore = [&](int slot) {
        for (; nextAverage < tl.averagingSlots.size() && tl.averagingSlots[nextAverage] < slot;
             ++nextAverage) {
            const int at = tl.averagingSlots[nextAverage];
            out.quoted(method) << ',' << at << ',' << at << ",,average,,,,"
                               << static_cast<long long>(nextAverage) + 1 << '\n';
        }
    };
    for (const TimelineCell& c : tl.cells) {
        writeAveragesBefore(c.startSlot);
        out.quoted(method) << ',' << c.startSlot << ',' << c.endSlot << ',' << c.stage + 1 << ','
                           << (c.op == OpKind::Forward ? 'F' : 'B') << ',' << c.microbatch << ',';
        if (delays) out << delays->versionRead(c.microbatch, c.stage);
        out << ',';
        if (localSgd) out << c.microbatch % p.replicas + 1 << ',' << c.microbatch / roundLength + 1;
        else out << ',';
        out << '\n';
    }
    writeAveragesBefore(tl.totalSlots + 1);
    return out.take();
}

std::string delayTableCsv(const DelayTable& d, const std::string& method, long long rows) {
    const long long n = rows < 0 ? d.updates() : std::min(rows, d.updates());
    TextBuilder out;
    out << "method,block_update,updated_stage,microbatch,slot";
    for (int j = 1; j <= d.stages(); ++j) out << ",delay_block" << j;
    out << '\n';
    for (long long k = 0; k < n; ++k) {
        const BlockUpdateInfo& u = d.update(k);
        out.quoted(method) << ',' << k << ',' << u.stage + 1 << ',' << u.microbatch << ','
                           << u.slot;
        for (int j = 0; j < d.stages(); ++j) out << ',' << d.delay(k, j);
        out << '\n';
    }
    return out.take();
}

}  // namespace pipelens
