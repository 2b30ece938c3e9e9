#include "schedule/stage_memory.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "errors.hpp"

namespace pipelens {
namespace {

void checkModel(const MemoryModel& model, int stages) {
    if (!model.stageWeights.empty() && static_cast<int>(model.stageWeights.size()) != stages) {
        throw ConfigError("memory model: stage_weights has " +
                          std::to_string(model.stageWeights.size()) +
                          " entries; the schedule has " + std::to_string(stages) +
                          " stages (one entry per stage, or none for 1 unit each)");
    }
    for (std::size_t s = 0; s < model.stageWeights.size(); ++s) {
        const double w = model.stageWeights[s];
        if (!(w >= 0.0) || !std::isfinite(w)) {
            throw ConfigError("memory model: stage_weights[" + std::to_string(s) +
                              "] = " + std::to_string(w) + "; allowed: a finite size >= 0");
        }
    }
    if (!(model.activation >= 0.0) || !std::isfinite(model.activation)) {
        throw ConfigError("memory model: activation = " + std::to_string(model.activation) +
                          "; allowed: a finite size >= 0");
    }
}

// A forward holds its microbatch's activation from its first slot; a full backward (or the W of
// a split one) frees it after its last slot. The input gradient I frees nothing.
bool frees(OpKind op) {
    return op == OpKind::Backward || op == OpKind::WeightGrad;
}

// The most activations held at once in each group (a stage, or a device), `groupOf` mapping a
// cell's stage to its group.
template <typename GroupOf>
std::vector<int> peakHeld(const Timeline& timeline, int groups, GroupOf groupOf) {
    // Frees of a slot sort before its takes: a slot that frees one microbatch and takes another
    // holds one.
    struct Change {
        int slot;
        int take;  // 0 = free, 1 = take
        int group;
    };
    std::vector<Change> all;
    all.reserve(timeline.cells.size());
    for (const TimelineCell& c : timeline.cells) {
        if (c.op == OpKind::Forward) {
            all.push_back({c.startSlot, 1, groupOf(c.stage)});
        } else if (frees(c.op)) {
            all.push_back({c.endSlot + 1, 0, groupOf(c.stage)});
        }
    }
    std::stable_sort(all.begin(), all.end(), [](const Change& a, const Change& b) {
        return a.slot != b.slot ? a.slot < b.slot : a.take < b.take;
    });
    std::vector<int> held(static_cast<std::size_t>(groups), 0);
    std::vector<int> peak(static_cast<std::size_t>(groups), 0);
    for (const Change& ch : all) {
        int& h = held[static_cast<std::size_t>(ch.group)];
        h += ch.take ? 1 : -1;
        int& p = peak[static_cast<std::size_t>(ch.group)];
        p = std::max(p, h);
    }
    return peak;
}

int weightVersionsOf(const Timeline& tl, int s) {
    const auto i = static_cast<std::size_t>(s);
    if (!tl.weightVersions.empty()) return tl.weightVersions[i];
    switch (tl.params.kind) {
        case ScheduleKind::PipeDream:
            return std::max(1, i < tl.peakStash.size() ? tl.peakStash[i] : 1);
        case ScheduleKind::LocalSgd:
            return std::max(1, tl.params.replicas);
        default:
            return 1;
    }
}

}  // namespace

double MemoryModel::weightOf(int stage) const {
    return stageWeights.empty() ? 1.0 : stageWeights[static_cast<std::size_t>(stage)];
}

std::vector<StageMemory> stageMemory(const Timeline& timeline, const MemoryModel& model) {
    const int S = timeline.params.stages;
    checkModel(model, S);
    std::vector<int> activations = timeline.peakActivations;
    if (static_cast<int>(activations.size()) != S) {
        activations = timeline.cells.empty() ? timeline.peakStash
                                             : peakHeld(timeline, S, [](int s) { return s; });
        activations.resize(static_cast<std::size_t>(S), 0);
    }
    std::vector<StageMemory> out(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
        StageMemory& m = out[static_cast<std::size_t>(s)];
        m.weightVersions = weightVersionsOf(timeline, s);
        m.activations = activations[static_cast<std::size_t>(s)];
        m.weightUnits = m.weightVersions * model.weightOf(s);
        m.activationUnits = m.activations * model.activation;
        m.total = m.weightUnits + m.activationUnits;
    }
    return out;
}

std::vector<DeviceMemory> deviceMemory(const Timeline& timeline, const MemoryModel& model) {
    const std::vector<StageMemory> stages = stageMemory(timeline, model);
    const int S = static_cast<int>(stages.size());
    const bool placed = static_cast<int>(timeline.stageRank.size()) == S;
    auto deviceOf = [&](int s) {
        return placed ? timeline.stageRank[static_cast<std::size_t>(s)] : s;
    };
    int devices = 0;
    for (int s = 0; s < S; ++s) devices = std::max(devices, deviceOf(s) + 1);
    std::vector<DeviceMemory> out(static_cast<std::size_t>(devices));
    for (int d = 0; d < devices; ++d) out[static_cast<std::size_t>(d)].device = d;
    for (int s = 0; s < S; ++s) {
        DeviceMemory& d = out[static_cast<std::size_t>(deviceOf(s))];
        d.stages.push_back(s);
        d.weightUnits += stages[static_cast<std::size_t>(s)].weightUnits;
        d.activations += stages[static_cast<std::size_t>(s)].activations;
    }
    // Several stages on one device reach their peaks at different times: count what the device
    // holds at once where the cells say.
    if (!timeline.cells.empty()) {
        const std::vector<int> peaks = peakHeld(timeline, devices, deviceOf);
        for (int d = 0; d < devices; ++d) {
            DeviceMemory& dm = out[static_cast<std::size_t>(d)];
            if (dm.stages.size() > 1) dm.activations = peaks[static_cast<std::size_t>(d)];
        }
    }
    for (DeviceMemory& d : out) {
        d.activationUnits = d.activations * model.activation;
        d.total = d.weightUnits + d.activationUnits;
    }
    return out;
}

DeviceMemory peakDevice(const std::vector<DeviceMemory>& devices) {
    DeviceMemory best;
    bool any = false;
    for (const DeviceMemory& d : devices) {
        if (!any || d.total > best.total) best = d;
        any = true;
    }
    return best;
}

}  // namespace pipelens
