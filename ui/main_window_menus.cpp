// The main window's menus and the actions behind them: files, export, sharing, presets.
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStackedWidget>
#include <algorithm>

#include "animation/animation_dialog.hpp"
#include "charts/comparison_gantt.hpp"
#include "charts/figure_strip.hpp"
#include "charts/gantt_chart.hpp"
#include "charts/loss_chart.hpp"
#include "charts/staleness_heatmap.hpp"
#include "charts/sweep_chart.hpp"
#include "charts/theorem_chart.hpp"
#include "controllers/experiment_controller.hpp"
#include "controllers/presets.hpp"
#include "controls/controls_panel.hpp"
#include "controls/playback_bar.hpp"
#include "experiment/output/chrome_trace.hpp"
#include "experiment/output/results.hpp"
#include "main_window.hpp"
#include "schedule/program.hpp"
#include "schedule/pytorch_csv.hpp"
#include "sweep_view.hpp"
#include "util/file_target.hpp"

namespace pipelens::ui {
namespace {

constexpr int kMaxRecentFiles = 8;
const char* const kJsonFilter = "PipeLens experiment (*.json);;All files (*)";

}  // namespace

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New (default experiment)"), QKeySequence::New, this,
                    [this] { loadPreset("default"); });
    file->addAction(tr("&Open experiment…"), QKeySequence::Open, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open experiment"), QString(), tr(kJsonFilter));
        if (!path.isEmpty()) openConfig(path);
    });
    recentMenu_ = file->addMenu(tr("Open &recent"));
    file->addAction(tr("&Import schedule (PyTorch CSV)…"), this, [this] {
        QSettings settings;
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Import a PyTorch pipeline schedule"), settings.value("import/dir").toString(),
            tr("PyTorch schedule CSV (*.csv);;All files (*)"));
        if (path.isEmpty()) return;
        settings.setValue("import/dir", QFileInfo(path).absolutePath());
        QString error;
        if (!importSchedule(path, &error)) QMessageBox::warning(this, tr("Import schedule"), error);
    });
    file->addAction(tr("&Save"), QKeySequence::Save, this, [this] {
        if (currentFile_.isEmpty()) {
            const QString path = QFileDialog::getSaveFileName(this, tr("Save experiment"),
                                                              "experiment.json", tr(kJsonFilter));
            if (!path.isEmpty()) saveConfig(path);
        } else {
            saveConfig(currentFile_);
        }
    });
    file->addAction(tr("Save &as…"), QKeySequence::SaveAs, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save experiment as"),
                                                          currentFile_, tr(kJsonFilter));
        if (!path.isEmpty()) saveConfig(path);
    });
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    exportMenu->addAction(tr("Window as PNG…"), QKeySequence(tr("Ctrl+E")), this,
                          [this] { exportChart("window", "png"); });
    exportMenu->addAction(tr("Window as SVG…"), this, [this] { exportChart("window", "svg"); });
    const QList<QPair<QString, QString>> charts = {{"gantt", tr("Gantt chart")},
                                                   {"compare", tr("Comparison Gantt")},
                                                   {"heatmap", tr("Staleness heatmap")},
                                                   {"loss", tr("Loss curves")},
                                                   {"theorem", tr("Theorem chart (RPD)")},
                                                   {"figures", tr("Figure strip")},
                                                   {"sweep", tr("Sweep chart")}};
    for (const auto& [id, name] : charts) {
        QMenu* sub = exportMenu->addMenu(name);
        for (const QString& format :
             {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("csv")}) {
            sub->addAction(tr("%1…").arg(format.toUpper()), this,
                           [this, id = id, format] { exportChart(id, format); });
        }
    }
    exportMenu->addAction(tr("All results (CSV + JSON folder, as the CLI writes)…"), this, [this] {
        if (!snapshot_) return;
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Results folder (empty, new, or one PipeLens wrote)"));
        if (dir.isEmpty()) return;
        QString error;
        if (exportAllResults(dir, &error))
            status(tr("Wrote all results to %1").arg(dir));
        else
            status(error, true);
    });
    // The schedule of every pipeline method as Chrome trace JSON (docs/results.md, "Traces for
    // Perfetto"); before a run, the planned timelines without the loss.
    exportMenu->addAction(tr("Trace for Perfetto (JSON)…"), this, [this] {
        if (!snapshot_) return;
        QSettings settings;
        const QString dir = settings.value("export/dir").toString();
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Trace for Perfetto"), dir + "/trace.json", tr("Chrome trace JSON (*.json)"));
        if (path.isEmpty()) return;
        settings.setValue("export/dir", QFileInfo(path).absolutePath());
        QString error;
        if (exportTrace(path, &error))
            status(tr("Exported %1: open it in ui.perfetto.dev or chrome://tracing").arg(path));
        else
            status(error, true);
    });
    file->addAction(tr("Export &animation (GIF, MP4, PNG frames)…"), this, [this] {
        const AnimationExportOutcome outcome = exportAnimationInteractively(this);
        if (!outcome.message.isEmpty()) status(outcome.message, outcome.error);
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("&Copy configuration as text"), QKeySequence(tr("Ctrl+Shift+C")), this,
                    &MainWindow::copyConfigText);
    edit->addAction(tr("&Paste configuration"), QKeySequence(tr("Ctrl+Shift+V")), this,
                    &MainWindow::pasteConfigText);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(tr("Run &now"), QKeySequence(Qt::Key_F5), controller_,
                   &ExperimentController::runNow);
    run->addAction(tr("&Cancel run"), QKeySequence(tr("Ctrl+.")), this, [this] {
        controller_->cancel();
        status(tr("Cancelled"));
    });
    run->addSeparator();
    run->addAction(tr("S&weep over a parameter…"), QKeySequence(tr("Ctrl+Shift+W")), this,
                   &MainWindow::showSweepView);
    run->addAction(tr("Cancel the s&weep"), this, [this] { sweep_->cancel(); });
    run->addSeparator();
    run->addAction(tr("&Play / pause"), QKeySequence(tr("Ctrl+Space")), playback_,
                   &PlaybackBar::togglePlay);
    run->addAction(tr("&Step one slot"), QKeySequence(tr("Ctrl+Right")), playback_,
                   &PlaybackBar::stepForward);
    run->addAction(tr("Step &back"), QKeySequence(tr("Ctrl+Left")), playback_,
                   &PlaybackBar::stepBack);
    run->addAction(tr("To the s&tart"), QKeySequence(tr("Ctrl+Home")), playback_,
                   &PlaybackBar::toStart);
    run->addAction(tr("To the &end"), QKeySequence(tr("Ctrl+End")), playback_, &PlaybackBar::toEnd);

    QMenu* presets = menuBar()->addMenu(tr("&Presets"));
    for (const QString& id : presetIds()) {
        presets->addAction(presetTitle(id), this, [this, id] { loadPreset(id); });
    }

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QAction* a : dockActions_) view->addAction(a);
    chartsOnly_ = view->addAction(tr("C&harts only"));
    chartsOnly_->setObjectName("chartsOnlyAction");
    chartsOnly_->setCheckable(true);
    chartsOnly_->setShortcut(QKeySequence(tr("Ctrl+Shift+F")));
    chartsOnly_->setToolTip(
        tr("Fold the Experiment, Lesson and Sweep panels away; again to bring "
           "them back"));
    connect(chartsOnly_, &QAction::toggled, this, &MainWindow::setChartsOnly);
    view->addSeparator();
    view->addAction(tr("Fit the Gantt chart and heatmap"), QKeySequence(tr("Ctrl+0")), this,
                    [this] {
                        gantt_->fitAll();
                        heatmap_->fitAll();
                    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Lesson"), QKeySequence::HelpContents, this, [this] {
        for (QAction* a : dockActions_) {
            if (!a->isChecked()) a->trigger();  // show the docks again
        }
    });
    help->addAction(tr("&About PipeLens"), this, [this] {
        QMessageBox::about(this, tr("About PipeLens"),
                           tr("<b>PipeLens %1</b><p>A workbench for pipeline-parallel training: "
                              "PipeDream, Randomized PipeDream and LocalSGD on a slot-accurate "
                              "simulator.</p>")
                               .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::addRecentFile(const QString& path) {
    QSettings settings;
    QStringList files = settings.value("recentFiles").toStringList();
    files.removeAll(path);
    files.prepend(path);
    while (files.size() > kMaxRecentFiles) files.removeLast();
    settings.setValue("recentFiles", files);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!recentMenu_) return;
    recentMenu_->clear();
    const QStringList files = QSettings().value("recentFiles").toStringList();
    for (const QString& f : files) {
        recentMenu_->addAction(QFileInfo(f).fileName(), this, [this, f] { openConfig(f); })
            ->setToolTip(f);
    }
    recentMenu_->setEnabled(!files.isEmpty());
}

bool MainWindow::exportView(const QString& what, const QString& format, const QString& path,
                            double scale, QString* error) {
    // Every view exports the same three ways: PNG at `scale`, SVG, CSV.
    auto byFormat = [&](auto* view) {
        return format == "png"   ? view->exportPng(path, scale, error)
               : format == "svg" ? view->exportSvg(path, error)
                                 : view->exportCsv(path, error);
    };
    if (what == "window") return exportWindow(path, scale, error);
    if (what == "gantt") return byFormat(gantt_);
    if (what == "compare") {
        // Tall enough for every method's lanes even where the Pipeline area is short; a hidden
        // chart (one method shown) takes the area's size first.
        const QSize size(pipelineStack_->width(),
                         std::max(pipelineStack_->height(), compare_->sizeHint().height()));
        if (!compare_->isVisible()) compare_->resize(size);
        return format == "png" ? compare_->exportPng(path, scale, error, size) : byFormat(compare_);
    }
    if (what == "heatmap") return byFormat(heatmap_);
    if (what == "loss") return byFormat(loss_);
    if (what == "theorem") return byFormat(theorem_);
    if (what == "sweep") {
        // The sweep's CSV is the view's (every point); its chart draws PNG and SVG.
        return format == "png"   ? sweep_->chart()->exportPng(path, scale, error)
               : format == "svg" ? sweep_->chart()->exportSvg(path, error)
                                 : sweep_->exportCsv(path, error);
    }
    return byFormat(figures_);
}

void MainWindow::exportChart(const QString& what, const QString& format) {
    QSettings settings;
    double scale = settings.value("export/scale", 2.0).toDouble();
    if (format == "png") {
        bool ok = false;
        scale = QInputDialog::getDouble(this, tr("Export PNG"),
                                        tr("Scale factor (2 = twice the size on screen):"), scale,
                                        0.25, 8.0, 2, &ok);
        if (!ok) return;
        settings.setValue("export/scale", scale);
    }
    const QString dir = settings.value("export/dir").toString();
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export"), dir + "/" + what + "." + format,
                                     tr("%1 files (*.%2)").arg(format.toUpper(), format));
    if (path.isEmpty()) return;
    settings.setValue("export/dir", QFileInfo(path).absolutePath());
    QString error;
    const bool ok = exportView(what, format, path, scale, &error);
    status(ok ? tr("Exported %1").arg(path) : error, !ok);
}

void MainWindow::copyConfigText() {
    QApplication::clipboard()->setText(controller_->configAsText());
    status(tr("Configuration copied: paste it (Ctrl+Shift+V) to restore this exact run"));
}

void MainWindow::pasteConfigText() {
    try {
        controller_->setConfig(
            ExperimentController::configFromText(QApplication::clipboard()->text()));
        controls_->resetStepScale();
        currentFile_.clear();
        presetId_.clear();
        updateTitle();
        status(tr("Configuration pasted"));
    } catch (const std::exception& e) {
        status(QString::fromStdString(e.what()), true);
    }
}

bool MainWindow::exportAllResults(const QString& folder, QString* error) {
    auto fail = [&](const QString& message) {
        if (error) *error = message;
        return false;
    };
    if (!snapshot_ || snapshot_->planOnly)
        return fail(tr("No results yet: run the experiment first"));
    try {
        // Checked first, so a refusal names the folder as the dialog did and writes nothing.
        const std::string target = prepareResultsFolder(folder.toStdString(), "Results folder");
        writeResults(snapshot_->experiment, target);
        return true;
    } catch (const std::exception& e) {
        return fail(QString::fromStdString(e.what()));
    }
}

bool MainWindow::exportTrace(const QString& path, QString* error) {
    if (!snapshot_) {
        if (error) *error = tr("No schedule yet: nothing to trace");
        return false;
    }
    try {
        const std::string text = chromeTraceJson(snapshot_->experiment);
        replaceFileAtomically(QFile::encodeName(path).toStdString(), text.data(), text.size());
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool MainWindow::importSchedule(const QString& path, QString* error) {
    try {
        const std::string file =
            QFile::encodeName(QFileInfo(path).absoluteFilePath()).toStdString();
        // Read here first: a bad file is refused with the parser's message (rank, step, cell)
        // before the config is touched.
        const ProgramSummary summary = summarizeProgram(readPytorchScheduleCsv(file));
        int added = -1;
        const QString refused = controller_->tryModify([&](ExperimentConfig& c) {
            c.stages = summary.stages;
            MethodSpec m;
            m.method = Method::Imported;
            m.scheduleFile = file;
            m.asyncUpdate = false;
            // The step size of a synchronous flushing method where there is one (the same
            // minibatch SGD), else the first method's, else 0.1.
            m.step.value = 0.1;
            const MethodSpec* like = nullptr;
            for (const MethodSpec& other : c.methods) {
                const bool flushes = other.method == Method::FillDrain ||
                                     other.method == Method::OneFOneB ||
                                     other.method == Method::ZeroBubbleH1;
                if (!like || (flushes && !(like->method == Method::FillDrain ||
                                           like->method == Method::OneFOneB ||
                                           like->method == Method::ZeroBubbleH1)))
                    like = &other;
            }
            if (like && (like->step.grid || like->step.value > 0.0)) m.step = like->step;
            c.methods.push_back(m);
            added = static_cast<int>(c.methods.size()) - 1;
        });
        if (!refused.isEmpty()) {
            if (error) *error = refused;
            status(refused, true);
            return false;
        }
        showMethodOnce_ = added;
        status(tr("Imported %1: %2 stages on %3 ranks, %4 microbatches a step")
                   .arg(QFileInfo(path).fileName())
                   .arg(summary.stages)
                   .arg(summary.ranks)
                   .arg(summary.microbatches));
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        status(QString::fromStdString(e.what()), true);
        return false;
    }
}

}  // namespace pipelens::ui
