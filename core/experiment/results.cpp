#include "experiment/results.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <unistd.h>

#include "errors.hpp"
#include "util/text_builder.hpp"

namespace pipelens {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string num(double v) { return TextBuilder().number(v).take(); }

json finiteOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

void writeText(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
    out.close();
    if (!out) throw IoError("cannot write " + path.string());
}

// Columns of equal-index series, one per method; shorter series leave empty cells.
std::string seriesCsv(const std::string& indexName, long long firstIndex,
                      const std::vector<std::string>& names,
                      const std::vector<const std::vector<double>*>& series, double shift) {
    TextBuilder out;
    out << indexName;
    for (const auto& n : names) out << ",\"" << n << '"';
    out << '\n';
    size_t rows = 0;
    for (auto* s : series) rows = std::max(rows, s->size());
    for (size_t i = 0; i < rows; ++i) {
        out << (static_cast<long long>(i) + firstIndex);
        for (auto* s : series) {
            out << ',';
            if (i < s->size()) out.number((*s)[i] - shift);
        }
        out << '\n';
    }
    return out.take();
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::string& content) {
    fs::path target(path);
    fs::path tmp = target;
    tmp += ".tmp-" + std::to_string(::getpid());
    writeText(tmp, content);
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw IoError("cannot write " + path + ": " + ec.message());
    }
}

json summaryJson(const ExperimentResult& r) {
    json j;
    j["name"] = r.config.name;
    j["backend"] = r.backendName;
    j["stages"] = r.config.stages;
    j["f_star"] = r.optimum;
    j["L"] = r.smoothness;
    j["slot_budget"] = r.budget.slotBudget;
    j["update_budget"] = r.budget.updateBudget;
    j["pd_microbatches"] = r.budget.pipeDreamMicrobatches;
    j["notices"] = r.notices;
    j["cancelled"] = r.cancelled;
    json ms = json::array();
    for (const MethodRun& o : r.methods) {
        const RunResult& res = o.result;
        json m;
        m["label"] = o.label;
        m["method"] = methodName(o.spec.method);
        m["step_size"] = res.stepSize;
        m["microbatches"] = res.microbatches;
        m["block_updates"] = res.updates;
        m["slots"] = res.totalSlots;
        m["initial_objective"] = finiteOrNull(res.initialObjective);
        m["final_objective"] = finiteOrNull(res.finalObjective());
        m["final_gap"] = finiteOrNull(res.finalObjective() - res.optimum);
        m["gradient_bound_G"] = res.gradientBound;
        m["max_delay"] = res.maxDelay;
        m["finished"] = res.finished;
        m["diverged"] = res.divergence.diverged;
        if (res.divergence.diverged) {
            m["divergence"] = {{"update", res.divergence.update},
                               {"slot", res.divergence.slot},
                               {"message", res.divergence.reason}};
        }
        if (res.utilization) {
            m["utilization"] = res.utilization->overall;
            m["bubble_fraction"] = res.utilization->bubbleFraction;
            m["utilization_per_stage"] = res.utilization->perStage;
        }
        if (res.timeline) m["peak_stashed_copies"] = res.timeline->peakStash;
        if (res.delayStats) {
            const DelayStats& d = *res.delayStats;
            m["delay_stats"] = {{"max", d.max},        {"mean", d.mean},
                                {"p10", d.p10},        {"p50", d.p50},
                                {"p90", d.p90},        {"formula_max", d.formulaMax},
                                {"formula_mean", d.formulaMean}, {"samples", d.samples}};
        }
        if (res.theorem) {
            const TheoremBound& t = *res.theorem;
            m["theorem"] = {{"optimisation", t.optimisation},
                            {"noise", t.noise},
                            {"staleness", t.staleness},
                            {"total", t.total},
                            {"step_size_allowed", t.stepSizeAllowed},
                            {"note", "the bound holds for randomized PipeDream, not for PD"}};
            if (!res.gradNormRunningMean.empty()) {
                m["theorem"]["mean_grad_norm_sq"] = res.gradNormRunningMean.back();
            }
        }
        if (!o.sweep.empty()) {
            json sw = json::array();
            for (const SweepPoint& p : o.sweep) {
                sw.push_back({{"step_size", p.stepSize},
                              {"final_gap", finiteOrNull(p.finalGap)},
                              {"diverged", p.diverged}});
            }
            m["sweep"] = sw;
            m["all_diverged"] = o.allDiverged;
        }
        ms.push_back(m);
    }
    j["methods"] = ms;
    return j;
}

std::string summaryText(const ExperimentResult& r) {
    std::ostringstream s;
    s << r.config.name << ": S=" << r.config.stages << ", budget " << r.budget.slotBudget
      << " slots / " << r.budget.updateBudget << " block updates, f*=" << num(r.optimum)
      << ", L=" << num(r.smoothness) << ", backend " << r.backendName << '\n';
    for (const auto& n : r.notices) s << "  notice: " << n << '\n';
    for (const MethodRun& o : r.methods) {
        const RunResult& res = o.result;
        s << "  " << std::left << std::setw(34) << o.label << " gamma=" << std::setw(10)
          << res.stepSize << " updates=" << std::setw(8) << res.updates
          << " f-f*=" << num(res.finalObjective() - res.optimum);
        if (res.divergence.diverged) s << "  DIVERGED: " << res.divergence.reason;
        if (o.allDiverged) s << "  (every step size of the grid diverged)";
        s << '\n';
    }
    return s.str();
}

void writeFolderAtomically(const std::string& folder,
                           const std::function<void(const fs::path& tmp)>& fill) {
    fs::path target = fs::absolute(folder);
    fs::path tmp = target;
    tmp += ".tmp-" + std::to_string(::getpid());
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (!fs::create_directories(tmp, ec) && ec) {
        throw IoError("cannot create results folder " + tmp.string() + ": " + ec.message());
    }
    try {
        fill(tmp);
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    // Swap the new folder in; the old one is removed only after the new one is in place.
    fs::path old = target;
    old += ".old-" + std::to_string(::getpid());
    bool hadOld = fs::exists(target);
    if (hadOld) {
        fs::rename(target, old, ec);
        if (ec) {
            fs::remove_all(tmp);
            throw IoError("cannot replace results folder " + target.string() + ": " + ec.message());
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        if (hadOld) fs::rename(old, target);
        fs::remove_all(tmp);
        throw IoError("cannot move results into " + target.string() + ": " + ec.message());
    }
    if (hadOld) fs::remove_all(old, ec);
}

void writeResults(const ExperimentResult& r, const std::string& folder) {
    writeFolderAtomically(folder, [&](const fs::path& tmp) {
        writeText(tmp / "summary.json", summaryJson(r).dump(2) + "\n");
        writeText(tmp / "config.json", r.config.toJson().dump(2) + "\n");
        std::vector<std::string> names;
        std::vector<const std::vector<double>*> perSlot;
        std::vector<const std::vector<double>*> perUpdate;
        for (const auto& o : r.methods) {
            names.push_back(o.label);
            perSlot.push_back(&o.result.objectivePerSlot);
            perUpdate.push_back(&o.result.objectivePerUpdate);
        }
        writeText(tmp / "objective_per_slot.csv", seriesCsv("slots_completed", 0, names, perSlot, 0.0));
        writeText(tmp / "objective_per_update.csv",
                  seriesCsv("block_update", 1, names, perUpdate, 0.0));
        writeText(tmp / "gap_per_update.csv",
                  seriesCsv("block_update", 1, names, perUpdate, r.optimum));
        // Gradient norms: long format (method, k, value, running mean).
        std::ostringstream g;
        g << "method,block_update,grad_norm_sq,running_mean\n";
        bool anyGrad = false;
        for (const auto& o : r.methods) {
            const RunResult& res = o.result;
            for (size_t i = 0; i < res.gradNormSq.size(); ++i) {
                anyGrad = true;
                g << '"' << o.label << "\"," << res.gradNormUpdates[i] << ','
                  << num(res.gradNormSq[i]) << ',' << num(res.gradNormRunningMean[i]) << '\n';
            }
        }
        if (anyGrad) writeText(tmp / "grad_norm.csv", g.str());
        std::ostringstream th;
        th << "method,optimisation,noise,staleness,total,mean_grad_norm_sq\n";
        bool anyTheorem = false;
        std::ostringstream sw;
        sw << "method,step_size,final_gap,diverged\n";
        bool anySweep = false;
        for (size_t i = 0; i < r.methods.size(); ++i) {
            const MethodRun& o = r.methods[i];
            const RunResult& res = o.result;
            if (res.theorem) {
                anyTheorem = true;
                th << '"' << o.label << "\"," << num(res.theorem->optimisation) << ','
                   << num(res.theorem->noise) << ',' << num(res.theorem->staleness) << ','
                   << num(res.theorem->total) << ','
                   << (res.gradNormRunningMean.empty() ? "" : num(res.gradNormRunningMean.back()))
                   << '\n';
            }
            for (const SweepPoint& p : o.sweep) {
                anySweep = true;
                sw << '"' << o.label << "\"," << num(p.stepSize) << ',' << num(p.finalGap)
                   << ',' << (p.diverged ? 1 : 0) << '\n';
            }
            if (res.timeline) {
                writeText(tmp / ("timeline_" + std::to_string(i) + ".csv"),
                          timelineCsv(*res.timeline, true));
            }
            if (res.delays) {
                const DelayTable& d = *res.delays;
                TextBuilder ds;
                ds << "block_update,updated_stage,microbatch,slot";
                for (int j = 0; j < d.stages(); ++j) ds << ",delay_block" << j;
                ds << '\n';
                for (long long k = 0; k < d.updates(); ++k) {
                    ds << k << ',' << d.update(k).stage << ',' << d.update(k).microbatch << ','
                       << d.update(k).slot;
                    for (int j = 0; j < d.stages(); ++j) ds << ',' << d.delay(k, j);
                    ds << '\n';
                }
                writeText(tmp / ("delays_" + std::to_string(i) + ".csv"), ds.take());
            }
        }
        if (anyTheorem) writeText(tmp / "theorem.csv", th.str());
        if (anySweep) writeText(tmp / "sweep.csv", sw.str());
    });
}

}  // namespace pipelens
