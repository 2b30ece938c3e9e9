#include "sweep_over_ranks.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>

#include "errors.hpp"
#include "work_distributor.hpp"

namespace pipelens {
namespace {

// Errors cross ranks as text; "K|" in front keeps the kind, so rank 0 throws the type a single
// process would have thrown (and the CLI exits with the same code).
std::string encodeFailure(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const ConfigError& e) {
        return std::string("C|") + e.what();
    } catch (const DataError& e) {
        return std::string("D|") + e.what();
    } catch (const IoError& e) {
        return std::string("I|") + e.what();
    } catch (const std::exception& e) {
        return std::string("E|") + e.what();
    } catch (...) {
        return "E|an exception that is not a std::exception";
    }
}

// Runs `f`, turning whatever it throws into a runtime_error holding the encoded failure.
template <typename F>
auto encodingFailures(F&& f) {
    try {
        return f();
    } catch (...) {
        throw std::runtime_error(encodeFailure(std::current_exception()));
    }
}

[[noreturn]] void throwDecoded(const std::string& encoded, const std::string& context) {
    const bool coded = encoded.size() >= 2 && encoded[1] == '|';
    const std::string message = context + (coded ? encoded.substr(2) : encoded);
    switch (coded ? encoded[0] : 'E') {
        case 'C':
            throw ConfigError(message);
        case 'D':
            throw DataError(message);
        case 'I':
            throw IoError(message);
        default:
            throw std::runtime_error(message);
    }
}

struct RankSetup {
    std::optional<SweepSpec> spec;
    BackendProvider backend;
    std::string failure;  // encoded; the rank then fails the first point it is given
};

// Rank 0 sends "S" and the normalised sweep, or "F" and why it could not start.
RankSetup receiveSweep(const MpiWorld& world, const std::string& fromCoordinator,
                       const SweepOverRanksOptions& options) {
    const std::string text = world.broadcastFromCoordinator(fromCoordinator);
    RankSetup setup;
    if (text.empty() || text[0] != 'S') {
        if (!world.isCoordinator()) throw StoppedByOtherRank("rank 0 could not start the sweep");
        return setup;
    }
    try {
        setup.spec = SweepSpec::fromJson(nlohmann::json::parse(text.substr(1)));
        if (options.backend) setup.backend = options.backend(*setup.spec);
    } catch (...) {
        setup.failure = encodeFailure(std::current_exception());
    }
    return setup;
}

std::string pointLabel(const SweepSpec& spec, std::size_t index) {
    return "sweep point " + std::to_string(index) + " (" + sweepAxisName(spec.axis) + " = " +
           spec.valueText(index) + ")";
}

}  // namespace

SweepOverRanksOutcome runSweepOverRanks(const MpiWorld& world,
                                        const std::function<SweepJob()>& prepare,
                                        const SweepOverRanksOptions& options) {
    std::optional<SweepJob> job;
    std::exception_ptr prepareError;
    std::string opening;
    if (world.isCoordinator()) {
        try {
            job = prepare();
            opening = "S" + job->spec.toJson().dump();
        } catch (...) {
            prepareError = std::current_exception();
            opening = "F";
        }
    }
    RankSetup setup = receiveSweep(world, opening, options);
    if (prepareError) std::rethrow_exception(prepareError);

    auto compute = [&](std::size_t index) -> std::string {
        if (!setup.failure.empty()) throw std::runtime_error(setup.failure);
        return encodingFailures([&] {
            SweepRunOptions run;
            run.backend = setup.backend;
            run.threads = 1;
            std::optional<PointResult> p = runSweepPoint(*setup.spec, index, run);
            if (!p) throw std::runtime_error("the point's runs were cancelled");
            return pointResultToJson(*p).dump();
        });
    };

    SweepOverRanksOutcome outcome;
    std::vector<std::size_t> todo;
    const auto start = std::chrono::steady_clock::now();
    std::size_t doneBefore = 0;
    std::size_t doneNow = 0;
    if (job) {
        outcome.points = job->folder.finished();
        outcome.points.resize(job->spec.points());
        for (std::size_t i = 0; i < outcome.points.size(); ++i) {
            if (outcome.points[i]) {
                ++doneBefore;
            } else {
                todo.push_back(i);
            }
        }
    }
    auto finishPoint = [&](std::size_t index, const std::string& result) {
        PointResult p = pointResultFromJson(nlohmann::json::parse(result));
        if (p.index != index) {
            throw std::runtime_error("a rank returned point " + std::to_string(p.index) +
                                     " for point " + std::to_string(index));
        }
        job->folder.writePoint(p);
        outcome.points[index] = std::move(p);
        job->folder.writeSummary(job->spec, outcome.points);
        ++doneNow;
        if (options.onProgress) {
            SweepProgress progress;
            progress.pointsDone = doneBefore + doneNow;
            progress.points = job->spec.points();
            progress.fractionDone = static_cast<double>(doneNow) / todo.size();
            progress.elapsedSeconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            progress.remainingSeconds =
                progress.elapsedSeconds * (todo.size() - doneNow) / static_cast<double>(doneNow);
            options.onProgress(progress);
        }
    };

    auto onFinish = [&](std::size_t index, const std::string& result) {
        encodingFailures([&] { finishPoint(index, result); });
    };

    DistributorOptions distributor;
    distributor.coordinatorComputes = options.coordinatorComputes;
    try {
        const DistributorReport report =
            distributeWork(world, todo, compute, onFinish, distributor);
        outcome.computedHere = report.computedHere;
        if (job) {
            outcome.rankOfPoint.assign(job->spec.points(), -1);
            for (std::size_t k = 0; k < todo.size(); ++k) {
                outcome.rankOfPoint[todo[k]] = report.rankOfItem[k];
            }
            job->folder.writeSummary(job->spec, outcome.points);
        }
    } catch (const WorkItemFailed& e) {
        // Every point that finished is in the folder, and in the summary written after it (as
        // when a single process stops on a failing point).
        if (!world.isCoordinator()) throw StoppedByOtherRank(e.what());
        throwDecoded(e.message(), pointLabel(job->spec, e.item()) + " failed on rank " +
                                      std::to_string(e.rank()) + ": ");
    }
    return outcome;
}

}  // namespace pipelens
