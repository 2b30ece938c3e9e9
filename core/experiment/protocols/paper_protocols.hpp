#pragma once
// The paper's experiments E1-E4 run with the protocols of SPEC section 7, as data: the figure's
// curves (to be drawn by the app's chart code), their CSV form and summary.json's key numbers.
// Drawing lives in ui/figures; this part needs no Qt.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/run/experiment.hpp"

namespace pipelens {

struct FigureSeries {
    std::string name;
    std::vector<double> x;
    std::vector<double> y;
    bool reference = false;      // a formula or fit drawn dashed beside the measured curves
    bool markers = false;        // one point per value of a sweep axis
    std::vector<double> yError;  // sd over seeds per point (drawn as bars where > 0), or empty
    bool band = false;           // yError drawn as a shaded band around the curve, not as bars
};

struct FigurePanel {
    std::string file;  // base name of the PNG, SVG and CSV files, e.g. "figure"
    std::string title;
    std::string xTitle;
    std::string yTitle;
    bool logX = false;
    bool logY = true;
    std::vector<FigureSeries> series;
};

// NOLINTNEXTLINE(bugprone-exception-escape): json's destructor may allocate (nlohmann's destroy)
struct Reproduction {
    std::string id;  // E1 ... E5
    std::vector<FigurePanel> figures;
    nlohmann::json summary;  // summary.json
};

// The experiments `reproduce all` runs, in order (E4 runs through the sweep engine). E5 (the
// language model, hours at full size on two cores) runs only when named.
std::vector<std::string> reproductionIds();
// Every experiment `reproduce` knows: those of `all`, then E5.
std::vector<std::string> knownReproductionIds();

// Which reading of the paper E2-E4 follow. Notebook: what the authors' notebooks ran (SPEC
// section 7.1: their stable rule and thresholds, grids, data seeds, E4's "reach" budget), the
// default. Captions: the protocol of the repository's captions and SPEC section 7's table
// (best-final for E2 and E3, data seed 1 for E2, E4 truncated at 3180 slots with the section 6
// stable rule), kept so that both readings can be compared.
enum class ReproduceProtocol { Notebook, Captions };
ReproduceProtocol parseReproduceProtocol(const std::string& text);  // ConfigError naming --protocol
std::string reproduceProtocolName(ReproduceProtocol protocol);

// What only some protocols read: E5's corpus (a UTF-8 file; empty: the built-in corpus) and its
// step size (the paper's 0.125 for every method instead of the stable rule over the grid); E2-E4's
// protocol; and for E2 and E4 the number of seeds: seed k (from 0) runs the whole protocol with
// data seed, gradient-noise seed and RPD seed shifted by k, so the figures show mean +- sd over
// independent data draws.
struct ReproduceInputs {
    std::string corpus;
    bool paperStep = false;
    ReproduceProtocol protocol = ReproduceProtocol::Notebook;
    int seeds = 1;
};
inline constexpr int kMaxReproduceSeeds = 32;

// Runs one experiment's protocol (`quick`: the smaller CI version of the same protocol).
// Throws ConfigError for an unknown id.
Reproduction reproduce(const std::string& id, bool quick, const RunOptions& options = {},
                       const ReproduceInputs& inputs = {});

// A figure's data as CSV: series,x,y (one row per point, series in order).
std::string figureCsv(const FigurePanel& figure);

// Least-squares coefficients (a, b) of y ~ a x^2 + b x (no intercept).
std::pair<double, double> fitQuadraticNoIntercept(const std::vector<double>& x,
                                                  const std::vector<double>& y);

}  // namespace pipelens
