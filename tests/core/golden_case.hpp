#pragma once
// Loads one folder of ../shared/golden: the setup, the data and the reference CSV columns.
#include <QtTest>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "data/loaders.hpp"
#include "method.hpp"
#include "objective/linear_objective.hpp"
#include "schedule/timeline.hpp"

namespace golden {

inline std::string dir(const std::string& name) {
    return std::string(PIPELENS_GOLDEN_DIR) + "/" + name;
}

inline nlohmann::json caseJson(const std::string& name) {
    std::ifstream in(dir(name) + "/case.json");
    return nlohmann::json::parse(in);
}

// Rows of a CSV with a header line, as strings.
inline std::vector<std::vector<std::string>> csvRows(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::vector<std::string> cells;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) cells.push_back(cell);
        rows.push_back(cells);
    }
    return rows;
}

// Column `col` of a CSV as doubles.
inline std::vector<double> csvColumn(const std::string& path, size_t col) {
    std::vector<double> out;
    for (const auto& r : csvRows(path)) out.push_back(std::stod(r.at(col)));
    return out;
}

inline std::shared_ptr<pipelens::LinearObjective> objective(const std::string& name) {
    auto c = caseJson(name);
    pipelens::Dataset data = pipelens::loadNpyPair(dir(name) + "/X.npy", dir(name) + "/y.npy");
    std::string kind = c["objective"]["kind"];
    auto loss = kind == "logistic" ? pipelens::LossKind::Logistic : pipelens::LossKind::Quadratic;
    double l2 = c["objective"].value("l2", 0.0);
    auto obj = std::make_shared<pipelens::LinearObjective>(std::move(data), loss, l2,
                                                           c["batch_size"].get<int>());
    // The reference f* and L: the runs compare f, which does not depend on them, but f - f*
    // curves and the theorem do; using the authors' values keeps both exact.
    obj->setOptimum(c["f_star"].get<double>());
    obj->setSmoothness(c["L"].get<double>());
    return obj;
}

// The schedule a case was made with (method, S, N, NOAM, R, H from case.json).
inline pipelens::ScheduleParams scheduleParams(const nlohmann::json& c) {
    pipelens::ScheduleParams p;
    p.kind = pipelens::parseScheduleKind(c["method"].get<std::string>());
    p.stages = c["stages"];
    p.microbatches = c["microbatches"];
    p.noam = c.value("noam", 0);
    p.replicas = c.value("replicas", 0);
    p.localSteps = c.value("local_steps", 1);
    return p;
}

inline bool relClose(double a, double b, double rel) {
    return std::abs(a - b) <= rel * std::max({std::abs(a), std::abs(b), 1e-300});
}

}  // namespace golden
