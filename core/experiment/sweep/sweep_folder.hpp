#pragma once
// A sweep's results folder (docs/sweeps.md):
//   sweep.json          the sweep, normalised (a sweep file itself: data paths made absolute)
//   points/point-NNNN.json  one per finished point, written atomically as soon as it finishes
//   summary.csv, summary.json  one row per point and method (rewritten at the end of a run)
//   .pipelens-sweep     marks a folder PipeLens wrote, so it is never confused with the user's
// The files depend only on the points' results, never on who computed them or when.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiment/output/schedule_comparison.hpp"
#include "experiment/sweep/point_result.hpp"
#include "experiment/sweep/sweep_spec.hpp"

namespace pipelens {

using SweepPoints = std::vector<std::optional<PointResult>>;  // one slot per axis value

class SweepFolder {
  public:
    // A new sweep: `dir` must not exist or be an empty folder (ConfigError otherwise, pointing
    // at --resume). With `resume`, a folder holding the same sweep is opened and its finished
    // points are read; one holding another sweep is refused (ConfigError), a missing one is
    // created.
    static SweepFolder open(const std::string& dir, const SweepSpec& spec, bool resume);

    const std::string& path() const { return dir_; }
    // The points already in the folder when it was opened (nullopt where not done yet).
    const SweepPoints& finished() const { return finished_; }
    // Writes points/point-NNNN.json atomically; safe to call from several threads at once.
    void writePoint(const PointResult& point) const;
    // Writes summary.csv and summary.json atomically.
    void writeSummary(const SweepSpec& spec, const SweepPoints& points) const;

    // Removes the folder again when open() created it and no point has been written into it
    // (a sweep that failed before its first point leaves nothing behind to block a rerun).
    // True when it removed the folder.
    bool discardIfUnused() const;

    static std::string pointFileName(std::size_t index);

  private:
    std::string dir_;
    bool created_ = false;
    SweepPoints finished_;
};

// The schedule axis's comparison (docs/sweeps.md): the target, 2 x the best final f - f* (or
// loss) over every finished point and method (+inf when none is finite), and the slots a
// method's seed-averaged curve took to first reach it (-1: never, or RPD, whose curve counts
// block updates, not slots).
double scheduleSweepTarget(const SweepPoints& points);
int pointTimeToTarget(const MethodPoint& method, double target);
// The comparison table of a sweep's finished points (the app's table of a schedule sweep): one
// row per finished point and method, in point order, against scheduleSweepTarget.
ScheduleComparison scheduleSweepComparison(const SweepSpec& spec, const SweepPoints& points);

// One row per finished point and method: the chosen step and the final values over seeds. The
// schedule axis adds the comparison columns (stages, microbatches_per_step, target,
// time_to_target_slots, bubble_fraction, peak_stage_memory_units).
std::string sweepSummaryCsv(const SweepSpec& spec, const SweepPoints& points);
// The same with each method's grid, plus which points are done.
nlohmann::json sweepSummaryJson(const SweepSpec& spec, const SweepPoints& points);

}  // namespace pipelens
