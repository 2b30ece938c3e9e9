#include "animation/animation_dialog.hpp"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QToolButton>
#include <algorithm>
#include <atomic>
#include <exception>

#include "animation/animation_export.hpp"
#include "charts/gantt_chart.hpp"
#include "errors.hpp"
#include "main_window.hpp"

namespace pipelens::ui {
namespace {

QSpinBox* spin(int lo, int hi, int value, QWidget* parent) {
    auto* s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setValue(value);
    return s;
}

}  // namespace

AnimationDialog::AnimationDialog(int totalSlots, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Export animation"));
    const QSettings settings;
    const QString dir = settings.value("export/dir", QDir::homePath()).toString();
    path_ = new QLineEdit(settings.value("animation/path", dir + "/pipeline.gif").toString(), this);
    path_->setToolTip(
        tr("FILE.gif (an animated GIF), FILE.mp4 (H.264 video) or a folder path ending in / "
           "(numbered PNG frames)"));
    path_->setMinimumWidth(360);
    auto* file = new QToolButton(this);
    file->setText(tr("File…"));
    auto* folder = new QToolButton(this);
    folder->setText(tr("Folder…"));
    folder->setToolTip(tr("A folder of PNG frames (frame_00000.png …)"));
    connect(file, &QToolButton::clicked, this, [this] { browse(false); });
    connect(folder, &QToolButton::clicked, this, [this] { browse(true); });
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(path_, 1);
    pathRow->addWidget(file);
    pathRow->addWidget(folder);

    const int total = std::max(1, totalSlots);
    from_ = spin(0, total - 1, 0, this);
    to_ = spin(1, total, total, this);
    from_->setToolTip(tr("The first slot shown run (frame 0)"));
    to_->setToolTip(tr("One past the last slot shown run: slots [from, to), one frame each"));
    auto* slotRow = new QHBoxLayout;
    slotRow->addWidget(from_);
    slotRow->addWidget(new QLabel(tr("to"), this));
    slotRow->addWidget(to_);
    slotRow->addWidget(new QLabel(tr("of %1 slots").arg(totalSlots), this));
    slotRow->addStretch();

    fps_ =
        spin(kAnimationMinFps, kAnimationMaxFps, settings.value("animation/fps", 10).toInt(), this);
    width_ = spin(kAnimationMinWidth, kAnimationMaxWidth,
                  settings.value("animation/width", 960).toInt(), this);
    height_ = spin(kAnimationMinHeight, kAnimationMaxHeight,
                   settings.value("animation/height", 540).toInt(), this);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(width_);
    sizeRow->addWidget(new QLabel(QStringLiteral("\u00d7"), this));
    sizeRow->addWidget(height_);
    sizeRow->addWidget(new QLabel(tr("pixels"), this));
    sizeRow->addStretch();

    panels_ = new QComboBox(this);
    panels_->addItem(tr("Gantt chart"), static_cast<int>(AnimationPanels::Gantt));
    panels_->addItem(tr("Gantt chart and loss curves"),
                     static_cast<int>(AnimationPanels::GanttLoss));
    panels_->addItem(tr("Gantt chart, loss curves and staleness heatmap"),
                     static_cast<int>(AnimationPanels::All));
    panels_->setCurrentIndex(std::clamp(settings.value("animation/panels", 0).toInt(), 0, 2));

    error_ = new QLabel(this);
    error_->setStyleSheet("color: #b00020;");
    error_->setWordWrap(true);
    error_->hide();

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    connect(buttons, &QDialogButtonBox::accepted, this, &AnimationDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &AnimationDialog::reject);

    auto* form = new QFormLayout;
    form->addRow(tr("File:"), pathRow);
    form->addRow(tr("Slots:"), slotRow);
    form->addRow(tr("Frames per second:"), fps_);
    form->addRow(tr("Size:"), sizeRow);
    form->addRow(tr("Panels:"), panels_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(new QLabel(tr("One frame per slot, from the Gantt chart's method; the format "
                                    "follows the file name (.gif, .mp4, or a folder ending in /)."),
                                 this));
    layout->addWidget(error_);
    layout->addWidget(buttons);
}

void AnimationDialog::browse(bool folder) {
    if (folder) {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Folder of PNG frames (new, empty, or one an export wrote)"));
        if (!dir.isEmpty()) path_->setText(dir.endsWith('/') ? dir : dir + '/');
        return;
    }
    const QString file = QFileDialog::getSaveFileName(
        this, tr("Export animation"), path_->text(),
        tr("Animated GIF (*.gif);;H.264 video (*.mp4);;All files (*)"));
    if (!file.isEmpty()) path_->setText(file);
}

std::optional<AnimationOptions> AnimationDialog::options() {
    try {
        AnimationOptions o;
        o.out = path_->text().toStdString();
        o.format = animationFormat(o.out, tr("File").toStdString());
        if (from_->value() >= to_->value()) {
            throw ConfigError(tr("Slots = %1 to %2 is not allowed: the first slot must come "
                                 "before the last")
                                  .arg(from_->value())
                                  .arg(to_->value())
                                  .toStdString());
        }
        o.slotRange = std::pair{from_->value(), to_->value()};
        o.fps = fps_->value();
        const QString size = QStringLiteral("%1x%2").arg(width_->value()).arg(height_->value());
        const auto [w, h] = parseFrameSize(size.toStdString(), o.format, tr("Size").toStdString());
        o.width = w;
        o.height = h;
        o.panels = static_cast<AnimationPanels>(panels_->currentData().toInt());
        prepareAnimationTarget(o, tr("File").toStdString());
        error_->hide();
        return o;
    } catch (const std::exception& e) {
        error_->setText(QString::fromStdString(e.what()));
        error_->show();
        return std::nullopt;
    }
}

void AnimationDialog::accept() {
    if (!options()) return;
    remember();
    QDialog::accept();
}

void AnimationDialog::remember() const {
    QSettings settings;
    settings.setValue("animation/path", path_->text());
    settings.setValue("animation/fps", fps_->value());
    settings.setValue("animation/width", width_->value());
    settings.setValue("animation/height", height_->value());
    settings.setValue("animation/panels", panels_->currentIndex());
}

AnimationExportOutcome exportAnimationInteractively(MainWindow* window) {
    AnimationSource source;
    try {
        source = animationSource(*window);
    } catch (const std::exception& e) {
        return {QObject::tr("Cannot export an animation: %1").arg(e.what()), true};
    }
    const auto timeline = window->gantt()->timeline();
    if (!timeline) {
        return {QObject::tr("Cannot export an animation: no method of this experiment has a "
                            "pipeline timeline"),
                true};
    }
    AnimationDialog dialog(timeline->totalSlots, window);
    if (dialog.exec() != QDialog::Accepted) return {};
    const std::optional<AnimationOptions> options = dialog.options();
    if (!options) return {};
    const int frames = options->slotRange->second - options->slotRange->first;
    QProgressDialog progress(QObject::tr("Drawing and encoding %1 frames…").arg(frames),
                             QObject::tr("Cancel"), 0, frames, window);
    progress.setWindowTitle(QObject::tr("Export animation"));
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(400);
    std::atomic<bool> cancel{false};
    AnimationFields fields;
    fields.out = QObject::tr("File").toStdString();
    fields.slotRange = QObject::tr("Slots").toStdString();
    fields.method = QObject::tr("Method").toStdString();
    try {
        const AnimationWritten written = exportAnimation(
            source, *options, fields,
            [&](int done, int) {
                progress.setValue(done);
                if (progress.wasCanceled()) cancel.store(true);
            },
            &cancel);
        progress.reset();
        QString message = QObject::tr("Wrote a %1 animation of %2 frames to %3")
                              .arg(QString::fromUtf8(formatName(options->format)))
                              .arg(written.frames)
                              .arg(QString::fromStdString(written.path));
        for (const std::string& w : written.warnings) message += "; " + QString::fromStdString(w);
        return {message, false};
    } catch (const Interrupted&) {
        return {QObject::tr("Animation export cancelled; nothing was written"), false};
    } catch (const std::exception& e) {
        return {QObject::tr("Animation export failed: %1").arg(e.what()), true};
    }
}

}  // namespace pipelens::ui
