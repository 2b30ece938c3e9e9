#pragma once
// The built-in experiments: a default one and one per figure of the paper (SPEC §7), each a
// JSON config in the command-line tool's format (resources/presets/ID.json) with a short lesson
// (resources/lessons/ID.md) saying what to look at.
#include <QString>
#include <QStringList>

#include "experiment/config.hpp"

namespace pipelens::ui {

struct Preset {
    QString id;
    QString title;
    QString lesson;  // Markdown
    ExperimentConfig config;
};

// In menu order; "default" first.
QStringList presetIds();
QString presetTitle(const QString& id);
// Throws ConfigError for an unknown id (the message lists the known ones).
Preset loadPreset(const QString& id);

}  // namespace pipelens::ui
