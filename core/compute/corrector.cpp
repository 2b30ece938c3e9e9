#include "compute/corrector.hpp"

#include <algorithm>
#include <sstream>

namespace pipelens {

std::string correctorSummary(const CorrectorSpec& spec) {
    std::ostringstream s;
    const char* sep = "";
    auto add = [&](const std::string& text) {
        s << sep << text;
        sep = " + ";
    };
    if (spec.prediction) {
        add(std::string("prediction (") +
            (spec.steps == PredictionSteps::Exact ? "exact s" : "PipeOptim s") + ")");
    }
    if (spec.lookahead) {
        std::ostringstream t;
        t << "lookahead (beta=" << spec.beta << ")";
        add(t.str());
    }
    if (spec.dc) {
        std::ostringstream t;
        t << "DC (lambda=" << spec.lambda << ")";
        add(t.str());
    }
    if (spec.accumulate > 1) add("accumulate (k=" + std::to_string(spec.accumulate) + ")");
    if (spec.delayAdaptive) {
        std::ostringstream t;
        t << "delay-adaptive";
        if (spec.perBlock) t << " per block";
        if (spec.tauRef > 0.0) t << " (tau_ref=" << spec.tauRef << ")";
        add(t.str());
    }
    return s.str();
}

void switchOn(CorrectorSpec& spec, CorrectorKind kind) {
    switch (kind) {
        case CorrectorKind::DelayAdaptive:
            spec.delayAdaptive = true;
            break;
        case CorrectorKind::Prediction:
            spec.prediction = true;
            break;
        case CorrectorKind::DelayCompensation:
            spec.dc = true;
            break;
        case CorrectorKind::Lookahead:
            spec.lookahead = true;
            break;
        case CorrectorKind::Accumulate:
            spec.accumulate = std::max(2, spec.accumulate);
            break;
    }
}

CorrectorSpec normalizedCorrectors(const CorrectorSpec& spec) {
    CorrectorSpec n;
    if (spec.delayAdaptive) {
        n.delayAdaptive = true;
        n.tauRef = spec.tauRef;
        n.perBlock = spec.perBlock;
        n.unit = spec.unit;
    }
    if (spec.prediction) {
        n.prediction = true;
        n.steps = spec.steps;
    }
    if (spec.dc) {
        n.dc = true;
        n.lambda = spec.lambda;
    }
    if (spec.lookahead) {
        n.lookahead = true;
        n.beta = spec.beta;
    }
    n.accumulate = spec.accumulate;
    return n;
}

double tauRefFor(const CorrectorSpec& spec, int stages) {
    return spec.tauRef > 0.0 ? spec.tauRef : static_cast<double>(stages);
}

}  // namespace pipelens
