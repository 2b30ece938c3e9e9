#include "sweep_command.hpp"

#include <sstream>

namespace pipelens {
namespace {

std::string duration(double seconds) {
    const auto s = static_cast<long long>(seconds + 0.5);
    std::ostringstream o;
    if (s >= 3600) o << s / 3600 << "h";
    if (s >= 60) o << (s % 3600) / 60 << "m";
    o << s % 60 << "s";
    return o.str();
}

}  // namespace

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
    err << "points " << p.pointsDone << "/" << p.points << ", "
        << static_cast<int>(100.0 * p.fractionDone + 0.5) << "% of the work, "
        << duration(p.elapsedSeconds) << " elapsed";
    if (p.remainingSeconds >= 0) err << ", about " << duration(p.remainingSeconds) << " left";
    err << '\n';
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
