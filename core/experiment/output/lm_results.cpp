#include "experiment/output/lm_results.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "errors.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/lm_experiment.hpp"
#include "util/csv_writer.hpp"

namespace pipelens {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json finiteOrNull(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

// Columns of equal-index series (one per method), rows from `first`; a NaN or a missing value is
// an empty cell.
std::string columnsCsv(const std::string& index, long long first,
                       const std::vector<std::string>& names,
                       const std::vector<const std::vector<double>*>& series) {
    CsvWriter out;
    out.plain(index);
    for (const auto& n : names) out.label(n);
    out.endRow();
    std::size_t rows = 0;
    for (auto* s : series) rows = std::max(rows, s->size());
    for (std::size_t i = 0; i < rows; ++i) {
        out.integer(static_cast<long long>(i) + first);
        for (auto* s : series) {
            if (i < s->size() && !std::isnan((*s)[i]))
                out.number((*s)[i]);
            else
                out.empty();
        }
        out.endRow();
    }
    return out.take();
}

void writeText(const fs::path& path, const std::string& content) {
    writeFileAtomically(path.string(), content);
}

std::string ruleName(const MethodRun& run) {
    return run.spec.step.grid ? stepRuleLabel(run.spec.step.rule) : "fixed";
}

json methodJson(const MethodRun& m) {
    const RunResult& r = m.result;
    json j{{"label", m.label},
           {"method", methodName(m.spec.method)},
           {"step_size", r.stepSize},
           {"step_rule", m.spec.step.grid ? stepRuleJson(m.spec.step.rule) : json("fixed")},
           {"all_diverged", m.allDiverged},
           {"final_loss", finiteOrNull(lmOf(m).finalLoss)},
           {"updates", r.updates},
           {"finished", r.finished},
           {"diverged", r.divergence.diverged}};
    if (!lmOf(m).log.forwardLosses.empty()) {
        j["first_forward_loss"] = finiteOrNull(lmOf(m).log.forwardLosses.front().loss);
        j["last_forward_loss"] = finiteOrNull(lmOf(m).log.forwardLosses.back().loss);
    }
    if (m.pipeline()) {
        j["microbatches"] = r.microbatches;
        j["total_slots"] = r.totalSlots;
        j.update(runLengthJson(m));
    } else {
        j["max_delay"] = r.maxDelay;
    }
    if (m.spec.method == Method::LocalSgd) {
        j["replicas"] = m.replicas;
        j["local_steps"] = m.spec.localSteps;
    }
    if (r.divergence.diverged) {
        j["divergence"] = {
            {"update", r.divergence.update},
            {"slot", r.divergence.slot >= 0 ? json(r.divergence.slot) : json(nullptr)},
            {"reason", r.divergence.reason}};
    }
    if (!lmOf(m).log.heldOutLoss.empty()) {
        j["held_out_final"] = {{"updates", lmOf(m).log.heldOutLoss.back().first},
                               {"loss", finiteOrNull(lmOf(m).log.heldOutLoss.back().second)}};
    }
    const auto& full =
        m.pipeline() ? lmOf(m).log.fullObjectivePerSlot : lmOf(m).log.fullObjectivePerBlockUpdate;
    if (!full.empty()) {
        j["full_objective_initial"] = finiteOrNull(r.initialObjective);
        j["full_objective_final"] = finiteOrNull(full.back());
    }
    json memory = json::array();
    for (const LmStageMemory& s : lmOf(m).memory) {
        memory.push_back({{"stashed_weights", s.stashedWeights},
                          {"predicted_stash", s.predictedStash},
                          {"kept_inputs", s.keptInputs},
                          {"weight_bytes", s.weightBytes},
                          {"activation_bytes", s.activationBytes}});
    }
    if (!memory.empty()) j["memory_per_stage"] = memory;
    json grid = json::array();
    for (std::size_t i = 0; i < m.grid.size(); ++i) {
        const GridStep& g = m.grid[i];
        grid.push_back({{"step_size", g.stepSize},
                        {"final_loss", finiteOrNull(g.finalObjective.mean)},
                        {"diverged", g.diverged},
                        {"stable", g.tail.stable()},
                        {"tail_mean", finiteOrNull(g.tail.tailMean)},
                        {"chosen", static_cast<int>(i) == m.chosen}});
    }
    j["grid"] = grid;
    return j;
}

std::string forwardLossesCsv(const ExperimentResult& res) {
    CsvWriter out;
    out.header("method,index,slot,batch,loss");
    for (const MethodRun& m : res.methods) {
        for (const LmForwardLoss& f : lmOf(m).log.forwardLosses) {
            out.label(m.label).integer(f.microbatch);
            if (f.slot >= 0)
                out.integer(f.slot);
            else
                out.empty();
            out.integer(f.batch).number(f.loss).endRow();
        }
    }
    return out.take();
}

std::string memoryCsv(const ExperimentResult& res) {
    CsvWriter out;
    out.header(
        "method,stage,stashed_weights,predicted_stash,kept_inputs,weight_bytes,activation_bytes");
    for (const MethodRun& m : res.methods) {
        for (std::size_t s = 0; s < lmOf(m).memory.size(); ++s) {
            const LmStageMemory& x = lmOf(m).memory[s];
            out.label(m.label)
                .integer(static_cast<long long>(s))
                .integer(x.stashedWeights)
                .integer(x.predictedStash)
                .integer(x.keptInputs)
                .integer(x.weightBytes)
                .integer(x.activationBytes)
                .endRow();
        }
    }
    return out.take();
}

std::string heldOutCsv(const ExperimentResult& res) {
    CsvWriter out;
    out.header("method,updates,loss");
    for (const MethodRun& m : res.methods) {
        for (const auto& [updates, loss] : lmOf(m).log.heldOutLoss) {
            out.label(m.label).integer(updates).number(loss).endRow();
        }
    }
    return out.take();
}

std::string sweepCsv(const ExperimentResult& res) {
    CsvWriter out;
    out.header("method,step_size,final_loss,diverged,stable,tail_mean,chosen");
    for (const MethodRun& m : res.methods) {
        for (std::size_t i = 0; i < m.grid.size(); ++i) {
            const GridStep& g = m.grid[i];
            out.label(m.label)
                .number(g.stepSize)
                .number(g.finalObjective.mean)
                .plain(g.diverged ? "true" : "false")
                .plain(g.tail.stable() ? "true" : "false")
                .number(g.tail.tailMean)
                .plain(static_cast<int>(i) == m.chosen ? "true" : "false")
                .endRow();
        }
    }
    return out.take();
}

std::string samplesText(const ExperimentResult& res) {
    std::ostringstream s;
    const LanguageModelSpec& spec = *res.config.objective.languageModel;
    s << "# " << spec.sampleLines << " samples of " << spec.sampleLength
      << " characters per method, temperature " << spec.sampleTemperature
      << ", sample l seeded with " << res.config.seed << " + l, from each method's final weights\n";
    for (const MethodRun& m : res.methods) {
        s << "\n== " << m.label << " (step size " << m.result.stepSize << ")\n";
        if (lmOf(m).samples.empty()) s << "(no samples: the weights are not finite)\n";
        for (std::size_t l = 0; l < lmOf(m).samples.size(); ++l) {
            s << "-- sample " << l << "\n" << lmOf(m).samples[l] << "\n";
        }
    }
    return s.str();
}

}  // namespace

json lmSummaryJson(const ExperimentResult& res) {
    const ExperimentConfig& c = res.config;
    const CharTransformerProblem& p = *res.lmProblem;
    json j;
    j["name"] = c.name;
    j["objective"] = {{"kind", "char_transformer"},
                      {"stages", c.stages},
                      {"width", p.params.width},
                      {"heads", p.params.heads},
                      {"context", p.params.context},
                      {"batch_size", p.params.batch},
                      {"vocabulary", p.corpus.vocabSize()},
                      {"parameters", p.layout.size()},
                      {"corpus", p.corpus.source},
                      {"corpus_characters", p.corpus.length()},
                      {"training_batches", p.train.batches()},
                      {"held_out_batches", p.heldOut ? p.heldOut->batches() : 0},
                      {"log_vocabulary", std::log(static_cast<double>(p.corpus.vocabSize()))},
                      {"precision", lmPrecisionName(p.params.precision)}};
    j["budget"] = {{"slots", res.budget.slotBudget},
                   {"pipedream_microbatches", res.budget.pipeDreamMicrobatches},
                   {"block_updates", res.budget.updateBudget},
                   {"compare", enumName(kBudgetCompares, c.budget.compare)},
                   {"rule", enumName(kBudgetRules, c.budget.rule)}};
    j["backend"] = res.backendName;
    j["final_loss_is"] = "mean of the last ceil(10 %) last-stage forward losses";
    j["notices"] = res.notices;
    j["warnings"] = res.warnings;
    j["cancelled"] = res.cancelled;
    json methods = json::array();
    for (const MethodRun& m : res.methods) methods.push_back(methodJson(m));
    j["methods"] = methods;
    return j;
}

std::vector<std::string> writeLmResults(const ExperimentResult& res, const std::string& folder,
                                        const std::atomic<bool>* cancel,
                                        const ExtraResultFiles& extra) {
    return writeFolderAtomically(
        folder,
        [&](const fs::path& tmp) {
            writeText(tmp / "config.json", res.config.toJson().dump(2) + "\n");
            writeText(tmp / "summary.json", lmSummaryJson(res).dump(2) + "\n");
            std::vector<std::string> pipeNames;
            std::vector<std::string> allNames;
            std::vector<const std::vector<double>*> perSlot;
            std::vector<const std::vector<double>*> perUpdate;
            std::vector<const std::vector<double>*> fullSlot;
            std::vector<const std::vector<double>*> fullUpdate;
            bool any = false;
            bool heldOut = false;
            bool grids = false;
            for (const MethodRun& m : res.methods) {
                allNames.push_back(m.label);
                perUpdate.push_back(&m.result.objectivePerUpdate);
                fullUpdate.push_back(&lmOf(m).log.fullObjectivePerBlockUpdate);
                if (m.pipeline()) {
                    pipeNames.push_back(m.label);
                    perSlot.push_back(&m.result.objectivePerSlot);
                    fullSlot.push_back(&lmOf(m).log.fullObjectivePerSlot);
                }
                any = any || !lmOf(m).log.fullObjectivePerSlot.empty() ||
                      !lmOf(m).log.fullObjectivePerBlockUpdate.empty();
                heldOut = heldOut || !lmOf(m).log.heldOutLoss.empty();
                grids = grids || m.spec.step.grid;
            }
            writeText(tmp / "loss_per_slot.csv", columnsCsv("slot", 0, pipeNames, perSlot));
            writeText(tmp / "loss_per_update.csv", columnsCsv("update", 1, allNames, perUpdate));
            writeText(tmp / "forward_losses.csv", forwardLossesCsv(res));
            writeText(tmp / "memory.csv", memoryCsv(res));
            writeText(tmp / "samples.txt", samplesText(res));
            if (any) {
                writeText(tmp / "full_objective_per_slot.csv",
                          columnsCsv("slot", 0, pipeNames, fullSlot));
                writeText(tmp / "full_objective_per_update.csv",
                          columnsCsv("update", 1, allNames, fullUpdate));
            }
            if (heldOut) writeText(tmp / "held_out.csv", heldOutCsv(res));
            if (grids) writeText(tmp / "sweep.csv", sweepCsv(res));
            if (extra) extra(tmp);
        },
        cancel);
}

std::string lmSummaryText(const ExperimentResult& res) {
    const CharTransformerProblem& p = *res.lmProblem;
    std::ostringstream s;
    s << res.config.name << ": language model S=" << res.config.stages << ", C=" << p.params.width
      << ", T=" << p.params.context << ", b=" << p.params.batch << ", V=" << p.corpus.vocabSize()
      << " (log V=" << std::setprecision(4) << std::log(static_cast<double>(p.corpus.vocabSize()))
      << "), " << p.layout.size() << " parameters; budget " << res.budget.slotBudget << " slots / "
      << res.budget.updateBudget << " block updates, " << res.engine << " in "
      << lmPrecisionName(p.params.precision) << '\n';
    for (const auto& n : res.notices) s << "  notice: " << n << '\n';
    for (const auto& w : res.warnings) s << "  warning: " << w << '\n';
    for (const MethodRun& m : res.methods) {
        const RunResult& r = m.result;
        s << "  " << std::left << std::setw(34) << m.label << " gamma=" << std::setw(10)
          << r.stepSize << " (" << ruleName(m) << ") updates=" << std::setw(8) << r.updates
          << " final loss=" << std::setprecision(5) << lmOf(m).finalLoss;
        if (!lmOf(m).log.heldOutLoss.empty())
            s << " held-out=" << lmOf(m).log.heldOutLoss.back().second;
        if (r.divergence.diverged) s << "  DIVERGED: " << r.divergence.reason;
        if (m.allDiverged) s << "  (every step size of the grid diverged)";
        s << '\n';
    }
    return s.str();
}

}  // namespace pipelens
