#pragma once
// Staleness correctors (docs/correctors.md, "Correctors"): small plug-ins of a replay that change
// what a stale update does, never the schedule (the Gantt chart is the same with or without).
// One method may combine several; each is off by default, and a spec with none is the engine's
// original update, bit for bit. Applied in a fixed order, whatever order the config lists them:
//  1. at a forward, the read point moves (prediction or lookahead; they exclude each other) and
//     what is read is what is stashed, so the backward differentiates at the same point;
//  2. at a backward, g is taken at that point, then dc adds lambda * g * g * (w_now - w_read);
//  3. accumulate sums g and applies the mean of k gradients at every k-th backward of the block;
//  4. the update (plain SGD or the optimizer; lookahead adds beta * d) uses the step size
//     gamma_k = gamma * tau_ref / max(tau_ref, tau_k) where delay_adaptive is on.
#include <cstdint>
#include <string>

#include "schedule/delays.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

enum class CorrectorKind : std::uint8_t {
    DelayAdaptive,
    Prediction,
    DelayCompensation,
    Lookahead,
    Accumulate
};
inline constexpr EnumNames<CorrectorKind, 5> kCorrectorKinds{
    {{CorrectorKind::DelayAdaptive, "delay_adaptive"},
     {CorrectorKind::Prediction, "prediction"},
     {CorrectorKind::DelayCompensation, "dc"},
     {CorrectorKind::Lookahead, "lookahead"},
     {CorrectorKind::Accumulate, "accumulate"}}};

// Weight prediction's s, the updates the block will receive before the gradient lands: exact
// from the schedule, or PipeOptim's S - 1 - stage.
enum class PredictionSteps : std::uint8_t { Exact, PipeOptim };
inline constexpr EnumNames<PredictionSteps, 2> kPredictionSteps{
    {{PredictionSteps::Exact, "exact"}, {PredictionSteps::PipeOptim, "pipeoptim"}}};

// Every corrector of one method (config: methods[i].correctors, a list of {"kind": ...}).
struct CorrectorSpec {
    // delay_adaptive: gamma_k = gamma * tau_ref / max(tau_ref, tau_k); tau_k = the largest delay
    // (in `unit`) over the blocks the applied gradient read; per_block: each block's steady
    // delay (the most frequent tau_k of its updates, ties to the larger) instead of tau_k.
    bool delayAdaptive = false;
    double tauRef = 0.0;  // 0 means S
    bool perBlock = false;
    DelayUnit unit = DelayUnit::BlockUpdates;
    // prediction: a forward reads w_hat = w + s * d, d the block's last applied change
    // (d = -gamma * Delta W, Delta W the optimizer's last direction).
    bool prediction = false;
    PredictionSteps steps = PredictionSteps::Exact;
    // dc (DC-ASGD): g += lambda * g (.) g (.) (w_now - w_read).
    bool dc = false;
    double lambda = 0.5;
    // lookahead (Ajanthan et al. 2025, asynchronous Nesterov): a forward reads w + beta * d;
    // the update is w <- w + beta * d - gamma * g. Only with optimizer sgd (it is the momentum).
    bool lookahead = false;
    double beta = 0.99;
    // accumulate (PACI-style): the mean of each block's last k gradients every k-th backward.
    int accumulate = 1;  // k; 1 = off

    bool any() const { return delayAdaptive || prediction || dc || lookahead || accumulate > 1; }
    bool operator==(const CorrectorSpec&) const = default;
};

// "prediction (exact s) + dc (lambda=0.5)": for labels; "" when none is on.
std::string correctorSummary(const CorrectorSpec& spec);
// The spec with the fields of the kinds that are off reset to their defaults.
CorrectorSpec normalizedCorrectors(const CorrectorSpec& spec);
// `spec` with `kind` turned on, its parameters kept where set (accumulate: k at least 2).
void switchOn(CorrectorSpec& spec, CorrectorKind kind);
// tau_ref with 0 resolved to S.
double tauRefFor(const CorrectorSpec& spec, int stages);

}  // namespace pipelens
