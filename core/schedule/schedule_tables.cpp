#include "schedule/schedule_tables.hpp"

#include <algorithm>
#include <cstddef>

#include "util/csv_writer.hpp"

namespace pipelens {

std::optional<ReplicaPlace> localSgdPlace(const ScheduleParams& p, int microbatch) {
    if (p.kind != ScheduleKind::LocalSgd || p.replicas <= 0) return std::nullopt;
    const int roundLength = std::max(1, p.replicas * p.localSteps);
    return ReplicaPlace{microbatch % p.replicas, microbatch / roundLength};
}

std::string ganttTableCsv(const Timeline& tl, const DelayTable* delays, const std::string& method) {
    CsvWriter out;
    out.header("method,slot,end_slot,stage,op,microbatch,version_read,replica,round");
    // Averagings interleave with the cells: one after the last cell that starts in its slot.
    std::size_t nextAverage = 0;
    auto writeAveragesBefore = [&](int slot) {
        for (; nextAverage < tl.averagingSlots.size() && tl.averagingSlots[nextAverage] < slot;
             ++nextAverage) {
            const int at = tl.averagingSlots[nextAverage];
            out.label(method)
                .integer(at)
                .integer(at)
                .empty()
                .plain("average")
                .empty()
                .empty()
                .empty()
                .integer(static_cast<long long>(nextAverage) + 1)
                .endRow();
        }
    };
    for (const TimelineCell& c : tl.cells) {
        writeAveragesBefore(c.startSlot);
        out.label(method)
            .integer(c.startSlot)
            .integer(c.endSlot)
            .integer(c.stage + 1)
            .plain(c.op == OpKind::Forward ? "F" : "B")
            .integer(c.microbatch);
        if (delays)
            out.integer(delays->versionRead(c.microbatch, c.stage));
        else
            out.empty();
        if (const std::optional<ReplicaPlace> place = localSgdPlace(tl.params, c.microbatch)) {
            out.integer(place->replica + 1).integer(place->round + 1);
        } else {
            out.empty().empty();
        }
        out.endRow();
    }
    writeAveragesBefore(tl.totalSlots + 1);
    return out.take();
}

std::string delayTableCsv(const DelayTable& d, const std::string& method, long long rows) {
    const long long n = rows < 0 ? d.updates() : std::min(rows, d.updates());
    CsvWriter out;
    out.plain("method,block_update,updated_stage,microbatch,slot");
    for (int j = 1; j <= d.stages(); ++j) out.plain("delay_block" + std::to_string(j));
    out.endRow();
    for (long long k = 0; k < n; ++k) {
        const BlockUpdateInfo& u = d.update(k);
        out.label(method).integer(k).integer(u.stage + 1).integer(u.microbatch).integer(u.slot);
        for (int j = 0; j < d.stages(); ++j) out.integer(d.delay(k, j));
        out.endRow();
    }
    return out.take();
}

}  // namespace pipelens
