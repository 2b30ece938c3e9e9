#include "sweep_over_mpi.hpp"

#include <optional>
#include <vector>

#include "cli.hpp"
#include "mpi_world.hpp"
#include "sweep_over_ranks.hpp"

namespace pipelens {
namespace {

// Rank 0, once the points are in: how many each rank computed, then the usual closing line.
int finishOnCoordinator(const MpiWorld& world, const SweepCommand& command,
                        const std::string& folderPath, const SweepOverRanksOutcome& outcome,
                        std::ostream& out, std::ostream& err) {
    if (!command.quiet) {
        std::vector<int> perRank(static_cast<std::size_t>(world.size()), 0);
        for (int r : outcome.rankOfPoint) {
            if (r >= 0) ++perRank[static_cast<std::size_t>(r)];
        }
        err << "points computed per rank:";
        for (int n : perRank) err << ' ' << n;
        err << '\n';
    }
    return reportSweepEnd(command, folderPath, outcome.points, out, err);
}

}  // namespace

int runSweepCommandOverMpi(const std::function<SweepCommand()>& parse, std::ostream& out,
                           std::ostream& err) {
    const MpiWorld world;
    std::optional<SweepCommand> command;  // rank 0's
    SweepOverRanksOptions options;
    options.backend = [&](const SweepSpec& spec) {
        std::vector<std::string> notices;
        BackendChoice choice = selectSweepBackend(spec, notices);
        if (world.isCoordinator() && !command->quiet) {
            for (const auto& n : notices) err << "notice: " << n << '\n';
        }
        return choice.provider;
    };
    options.onProgress = [&](const SweepProgress& p) {
        if (!command->quiet) printSweepProgress(err, p);
    };
    std::string folderPath;
    std::optional<SweepFolder> opened;  // rank 0's, to remove it if no point finished
    auto prepare = [&] {
        command = parse();
        if (!command->quiet) {
            err << "sweep over " << world.size() << " MPI processes, one point at a time each";
            if (command->threads > 0) err << " (--threads is not used under mpirun)";
            err << '\n';
        }
        SweepFolder folder = SweepFolder::open(command->outDir, command->spec, command->resume);
        folderPath = folder.path();
        opened = folder;
        return SweepJob{command->spec, std::move(folder)};
    };
    // mpirun ends the whole job as soon as one process exits non-zero, so no rank returns before
    // rank 0 has written and printed everything.
    SweepOverRanksOutcome outcome;
    try {
        outcome = runSweepOverRanks(world, prepare, options);
    } catch (const StoppedByOtherRank&) {
        world.waitForAll();
        return 1;  // rank 0 prints why
    } catch (...) {
        const int code = reportCliError(std::current_exception(), err);
        // The folder is open once folderPath is set: its finished points are kept, or, when
        // none finished in a folder this run created, it is removed so it blocks no rerun.
        if (world.isCoordinator() && command && opened && !opened->discardIfUnused()) {
            printSweepResumeHint(*command, err);
        }
        world.waitForAll();
        return code;
    }
    int code = 0;
    if (world.isCoordinator()) {
        code = finishOnCoordinator(world, *command, folderPath, outcome, out, err);
    }
    world.waitForAll();
    return code;
}

}  // namespace pipelens
