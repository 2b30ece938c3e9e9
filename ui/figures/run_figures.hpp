#pragma once
// `pipelens-cli run --figures`: a finished run's pictures, drawn by the app's own views on Qt's
// offscreen platform, and an index.html that shows them with the summary table. No display
// needed; the run is shown, not run again.
#include <filesystem>
#include <string>
#include <vector>

namespace pipelens {
struct ExperimentResult;
}

namespace pipelens::ui {

// One picture of the figures: its file (in the results folder) and caption.
struct RunFigure {
    std::string file;
    std::string title;
    std::string caption;
};

// Draws the figures of `result` into `folder` (gantt.png at its opening view, gantt-all.png,
// compare.png when two or more methods have timelines, heatmap.png, loss.png, figures.png,
// window.png; a chart with nothing to show is left out) and writes index.html. Throws IoError when
// a file cannot be written, ConfigError when the run's config is refused by the window. Returns the
// figures written.
std::vector<RunFigure> writeRunFigures(const ExperimentResult& result, double seconds,
                                       const std::filesystem::path& folder);

// The page that shows `figures` (relative links, no network): title, the run's summary table
// and text, each figure with its caption, and the data files beside it. HTML-escaped.
std::string runIndexHtml(const ExperimentResult& result, const std::vector<RunFigure>& figures,
                         const std::vector<std::string>& dataFiles);

}  // namespace pipelens::ui
