#pragma once
// The built-in experiments: a default one and one per figure of the paper (SPEC §7), each a
// JSON file in the command-line tool's format (resources/presets/ID.json) with a short lesson
// (resources/lessons/ID.md) saying what to look at. Where the paper's figure is a sweep (final
// values against δ or S) the file is a sweep file (docs/sweeps.md) and the preset opens in the
// Sweep view; otherwise it is an experiment config.
#include <QString>
#include <QStringList>
#include <optional>

#include "experiment/config/config.hpp"
#include "experiment/sweep/sweep_plot.hpp"
#include "experiment/sweep/sweep_spec.hpp"

namespace pipelens::ui {

struct Preset {
    QString id;
    QString title;
    QString lesson;  // Markdown
    // The experiment the window runs: a sweep's first point, or for a sweep over δ one run with
    // PipeDream and RPD at every δ of the axis (the paper's E2 figure in the loss chart).
    ExperimentConfig config;
    std::optional<SweepSpec> sweep;              // set for the presets that open as sweeps
    SweepMetric metric = SweepMetric::FinalGap;  // what a sweep preset plots (E4: final f)
};

// In menu order; "default" first.
QStringList presetIds();
QString presetTitle(const QString& id);
// Throws ConfigError for an unknown id (the message lists the known ones).
Preset loadPreset(const QString& id);

}  // namespace pipelens::ui
