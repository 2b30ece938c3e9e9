#pragma once
// `pipelens-cli study staleness` (docs/correctors.md, "Study"): can a corrector undo PipeDream's
// staleness? For S in {4, 8, 16, 32} and two problems (the paper's logistic E4 setting and the
// character language model), PD alone, PD with each corrector alone, RPD, LocalSGD and 1F1B
// (a synchronous flush schedule) run on equal time, each step size tuned per (method, S) by the
// stable rule over a grid; the table gives the final loss over seeds, the time to a target loss
// and divergence, and the figures the final loss against S and the loss curves at S = 8.
// Drawing lives in ui/figures; this part needs no Qt.
#include <functional>
#include <string>
#include <vector>

#include "experiment/protocols/paper_protocols.hpp"

namespace pipelens {

struct StudyInputs {
    bool quick = false;
    int seeds = 0;  // 0: the default of each problem (logistic 3, language model 1; quick 2, 1)
    // The problems to run, by key ("logistic", "language_model"); empty: every one. They run
    // in studyProblems()'s order whatever the order here.
    std::vector<std::string> problems;
};
inline constexpr int kMaxStudySeeds = 16;

// One (problem, S, method) of the study.
struct StudyRow {
    std::string problem;  // "logistic" or "language_model"
    int stages = 0;
    std::string method;  // the study's key: "pd", "pd+dc", "rpd", "1f1b", ...
    std::string label;   // as the figures name it
    double stepSize = 0.0;
    bool tuned = true;
    bool atGridEdge = false;  // the rule chose the smallest or the largest step of the grid
    int seeds = 1;
    double finalMean = 0.0;      // final loss (logistic: f; language model: training loss)
    double finalSd = 0.0;        // over seeds
    double target = 0.0;         // in the same unit as final
    long long timeSlots = -1;    // first slot after which the seed-mean loss is <= target
    long long timeUpdates = -1;  // block updates done by then
    bool diverged = false;       // the chosen run diverged, or every step size of the grid did
    std::string divergedAt;      // "slot 812 (block update 3040)", "every step size", or ""
    long long updates = 0;
    int runSlots = 0;  // the run's length in slots (0 for RPD, which has none of its own)
};

// NOLINTNEXTLINE(bugprone-exception-escape): json's destructor may allocate (nlohmann's destroy)
struct StalenessStudy {
    std::vector<StudyRow> rows;
    std::vector<FigurePanel> figures;
    nlohmann::json summary;
};

// The study's problems, stages and method keys, in table order (quick: S = 4, 8).
std::vector<std::string> studyProblems();
std::vector<int> studyStages(bool quick);
std::vector<std::string> studyMethodKeys();

// Runs the whole study. `progress` gets one line per finished (problem, S).
StalenessStudy runStalenessStudy(const StudyInputs& inputs, const RunOptions& options,
                                 const std::function<void(const std::string&)>& progress = {});

// staleness.csv (one row per problem, S and method) and staleness.md (the same as tables, with
// the target's definition in the header).
std::string studyCsv(const StalenessStudy& study);
std::string studyMarkdown(const StalenessStudy& study);

}  // namespace pipelens
