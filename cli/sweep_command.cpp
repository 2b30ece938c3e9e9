#include "sweep_command.hpp"


namespace pipelens {
BackendChoice selectSweepBackend(const SweepSpec& spec, std::vector<std::string>& notices) {
    std::size_t probe = 0;
    for (std::size_t i = 0; i < spec.points(); ++i) {
        if (spec.pointConfig(i).objective.gradientNoise > 0.0) {
            probe = i;
            break;
        }
    }
    return selectBackend(spec.pointConfig(probe), notices);
}

void printSweepProgress(std::ostream& err, const SweepProgress& p) {
    err << sweepProgressLine(p) << '\n';
}

int reportSweepEnd(const SweepCommand& command, const std::string& folderPath,
                   const SweepPoints& points, std::ostream& out, std::ostream& err) {
    std::size_t done = 0;
    for (const auto& p : points) done += p ? 1 : 0;
    if (done < command.spec.points()) {
        err << "pipelens-cli: sweep interrupted: " << done << " of " << command.spec.points()
            << " points are in " << folderPath << "; run again with --resume to finish\n";
        return 130;
    }
    if (!command.quiet) {
        out << "sweep " << command.spec.name << ": " << command.spec.points() << " points over "
            << sweepAxisName(command.spec.axis) << " written to " << folderPath << '\n';
    }
    return 0;
}

}  // namespace pipelens
