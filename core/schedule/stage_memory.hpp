#pragma once
// Memory per stage and per device of a schedule (issue #31, "Memory per stage"): weight versions
// held at once plus activations held at once, in units the caller chooses (MemoryModel).
//
// Weight versions of stage s:
//  - program schedules (1F1B, ZB-H1, 2BW, imported): Timeline::weightVersions (1 for a
//    synchronous step, 2 for 2BW, the stash depth for imported update = async);
//  - PipeDream: Timeline::peakStash, the weight copies stashed at once (S - s on stage s from 0);
//  - fill-drain (GPipe): 1;
//  - LocalSGD (and SGD, its R = 1 case): R. The R replicas run on the same S stages (one
//    timeline, microbatch m on replica m mod R), so each stage holds R weight copies.
// Activations of stage s: Timeline::peakActivations where the schedule gives it (program
// schedules), else the peak number of microbatches whose forward has started and whose full
// backward has not ended, counted from the cells (fill-drain: min(M, N); PD: S - s).
// A device holds the stages Timeline::stageRank gives it (interleaved or V-shaped imports hold
// several); without a placement each stage is its own device.
#include <vector>

#include "schedule/timeline.hpp"

namespace pipelens {

// Sizes in one unit of the caller's choice (the views: one stage's weights of the linear model,
// one transformer block's parameters of the language model).
struct MemoryModel {
    // One weight version of each stage; empty: 1 unit each. The language model's first stage
    // also holds the embedding and its last the head (LmLayout::stage(s).size).
    std::vector<double> stageWeights;
    // One microbatch's activation kept on a stage for its backward.
    double activation = 1.0;

    double weightOf(int stage) const;
};

struct StageMemory {
    int weightVersions = 0;  // held at once
    int activations = 0;     // microbatches held at once
    double weightUnits = 0.0;
    double activationUnits = 0.0;
    double total = 0.0;  // weightUnits + activationUnits
};

struct DeviceMemory {
    int device = 0;
    std::vector<int> stages;   // ascending
    double weightUnits = 0.0;  // every version of every stage it holds
    // Microbatch activations held at once on the device, over all its stages (from the cells;
    // the sum of its stages' peaks where the timeline keeps no cells), and their size.
    int activations = 0;
    double activationUnits = 0.0;
    double total = 0.0;
};

// Per stage, in stage order. Throws ConfigError when the model's stageWeights is non-empty and
// does not have one entry per stage, or holds a negative size.
std::vector<StageMemory> stageMemory(const Timeline& timeline, const MemoryModel& model = {});

// Per device, in device order (one per stage when the timeline has no stageRank).
std::vector<DeviceMemory> deviceMemory(const Timeline& timeline, const MemoryModel& model = {});

// The device holding the most (the first of equals); a default DeviceMemory for no stages.
DeviceMemory peakDevice(const std::vector<DeviceMemory>& devices);

}  // namespace pipelens
