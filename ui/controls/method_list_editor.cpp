#include "controls/method_list_editor.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QResizeEvent>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "controllers/experiment_controller.hpp"
#include "controls/corrector_picker.hpp"
#include "controls/log_slider.hpp"
#include "models/uncorrected_twin.hpp"

namespace pipelens::ui {
namespace {

// Equal when every method would run alike (parameters of another method aside).
bool sameMethods(const std::vector<MethodSpec>& a, const std::vector<MethodSpec>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const MethodSpec& x, const MethodSpec& y) {
                          return normalizedMethod(x) == normalizedMethod(y);
                      });
}

QString methodTitle(const MethodSpec& m, int stages) {
    // An imported schedule before its file is chosen (the core's label is the file's name).
    if (m.label.empty() && m.method == Method::Imported && m.scheduleFile.empty())
        return QObject::tr("Imported schedule (no file yet)");
    return QString::fromStdString(m.label.empty() ? defaultMethodLabel(m, stages) : m.label);
}

QComboBox* combo(QWidget* parent) {
    auto* c = new QComboBox(parent);
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(12);
    return c;
}

}  // namespace

MethodListEditor::MethodListEditor(ExperimentController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    list_ = new QListWidget(this);
    list_->setMaximumHeight(120);
    list_->setToolTip(
        tr("Methods to compare. Checked methods run and are overlaid in every "
           "chart; select one to edit its parameters below."));
    add_ = new QPushButton(tr("Add"), this);
    auto* menu = new QMenu(add_);
    for (const MethodInfo& info : kMethods) {
        menu->addAction(tr(std::string(info.description).c_str()), this,
                        [this, method = info.method] { addMethod(method); });
    }
    add_->setMenu(menu);
    add_->setToolTip(tr("Add another method to the comparison"));
    remove_ = new QPushButton(tr("Remove"), this);
    remove_->setToolTip(tr("Remove the selected method from the list"));

    editor_ = new QWidget(this);
    form_ = new QFormLayout(editor_);
    form_->setContentsMargins(0, 0, 0, 0);
    form_->setRowWrapPolicy(QFormLayout::WrapLongRows);  // as the panel's forms: narrow dock
    step_ = new LogSlider(1e-6, 100.0, limits::kStepSize, editor_);
    errors_.addRow(form_, tr("Step size γ"), step_,
                   tr("The step size of the selected method (log slider; exact value in the "
                      "field). Ignored when 'tune γ on a grid' is on."));
    grid_ = new QCheckBox(tr("tune γ = 2^a, a from"), editor_);
    gridMin_ = spin(limits::kGridExponent);
    gridMax_ = spin(limits::kGridExponent);
    auto* gridRow = new QWidget(editor_);
    auto* gridLayout = new QHBoxLayout(gridRow);
    gridLayout->setContentsMargins(0, 0, 0, 0);
    gridLayout->addWidget(grid_);
    gridLayout->addWidget(gridMin_);
    gridLayout->addWidget(new QLabel(tr("to"), gridRow));
    gridLayout->addWidget(gridMax_);
    gridLayout->addStretch();
    errors_.addRow(form_, tr("Grid"), gridRow,
                   tr("Runs every γ = 2^a for integer a in the range and keeps the run with the "
                      "lowest final f − f* that did not diverge (SPEC §6)"));
    noam_ = spin(limits::kNoam, tr("S (default)"));
    errors_.addRow(form_, tr("NOAM"), noam_,
                   tr("PipeDream: microbatches allowed in flight (0 = S). Fewer means fewer "
                      "stashed copies and smaller delays, but bubbles."));
    delayMode_ = combo(editor_);
    delayMode_->addItem(tr("uniform on {0…δ}"), "uniform");
    delayMode_->addItem(tr("all maximal (δ)"), "max");
    delayMode_->addItem(tr("all zero"), "zero");
    delayMode_->addItem(tr("PipeDream's exact delays"), "pd");
    errors_.addRow(form_, tr("Delay mode"), delayMode_,
                   tr("RPD: how the delay of each block read is chosen"));
    delta_ = spin(limits::kDelta, tr("S² − S/2 (PD's max)"));
    errors_.addRow(form_, tr("δ (max delay)"), delta_,
                   tr("RPD: the largest delay drawn; −1 means PipeDream's maximum S² − S/2"));
    order_ = combo(editor_);
    order_->addItem(tr("uniform (theorem)"), "uniform");
    order_->addItem(tr("PipeDream's order"), "pd");
    errors_.addRow(form_, tr("Stage/batch order"), order_,
                   tr("RPD: draw stage and batch uniformly (the theorem's case) or follow a "
                      "PipeDream timeline"));
    replicas_ = spin(limits::kReplicas, tr("S (default)"));
    errors_.addRow(form_, tr("R (replicas)"), replicas_,
                   tr("LocalSGD: number of replicas (0 = S); microbatch m trains replica m mod R"));
    localSteps_ = spin(limits::kLocalSteps);
    errors_.addRow(form_, tr("H (local steps)"), localSteps_,
                   tr("LocalSGD: local steps per replica between two averagings"));
    flushGroup_ = spin(limits::kFlushGroup, tr("S (default)"));
    errors_.addRow(form_, tr("Flush group"), flushGroup_,
                   tr("Fill-drain, 1F1B, ZB-H1 and interleaved: microbatches per optimizer step "
                      "(0 = S); their mean gradient is applied at the step's end"));
    virtualStages_ = spin(limits::kVirtualStages);
    errors_.addRow(form_, tr("Virtual stages v"), virtualStages_,
                   tr("Interleaved 1F1B: model chunks per device; the model is split into S·v "
                      "chunks and each chunk op costs 1/v of a stage op (forward and backward "
                      "costs must be multiples of v)"));
    accumulation_ = spin(limits::kAccumulation, tr("S (default)"));
    errors_.addRow(form_, tr("Accumulation m"), accumulation_,
                   tr("PipeDream-2BW: microbatches whose gradients one update sums (0 = S; at "
                      "least S); each group reads the weight version before the newest"));
    scheduleFile_ = new QLineEdit(editor_);
    scheduleFile_->setPlaceholderText(tr("a PyTorch schedule .csv"));
    browseSchedule_ = new QPushButton(tr("Browse…"), editor_);
    auto* fileRow = new QWidget(editor_);
    auto* fileLayout = new QHBoxLayout(fileRow);
    fileLayout->setContentsMargins(0, 0, 0, 0);
    fileLayout->addWidget(scheduleFile_, 1);
    fileLayout->addWidget(browseSchedule_);
    errors_.addRow(form_, tr("Schedule file"), fileRow,
                   tr("Imported: the PyTorch schedule CSV (one row per rank, one action per "
                      "column) repeated as the optimizer step; relative paths are read from the "
                      "config's folder"));
    update_ = combo(editor_);
    update_->addItem(tr("sync (one step per program)"), "sync");
    update_->addItem(tr("async (each backward updates, stashing)"), "async");
    errors_.addRow(form_, tr("Update"), update_,
                   tr("Imported: sync applies the mean gradient once per program, as PyTorch "
                      "does; async updates a block at each of its backwards, with weight "
                      "stashing as PipeDream"));
    picker_ = new CorrectorPicker(
        form_, editor_, errors_,
        [this](QWidget* field, const std::function<void(MethodSpec&)>& change) {
            editCurrent(field, change);
        },
        [this]() -> const MethodSpec* {
            const int row = list_->currentRow();
            return row >= 0 && row < static_cast<int>(specs_.size())
                       ? &specs_[static_cast<size_t>(row)]
                       : nullptr;
        });
    connect(picker_, &CorrectorPicker::compareRequested, this,
            [this] { compareWithUncorrected(); });

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(add_);
    buttons->addWidget(remove_);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(list_);
    layout->addLayout(buttons);
    layout->addWidget(editor_);

    connect(list_, &QListWidget::currentRowChanged, this, &MethodListEditor::showCurrent);
    connect(list_, &QListWidget::itemChanged, this, &MethodListEditor::onItemChanged);
    connect(remove_, &QPushButton::clicked, this, [this] {
        const int row = list_->currentRow();
        if (row < 0) return;
        const MethodSpec spec = specs_[static_cast<size_t>(row)];
        const Qt::CheckState state = list_->item(row)->checkState();
        updating_ = true;
        specs_.erase(specs_.begin() + row);
        delete list_->takeItem(row);
        updating_ = false;
        const QString error = state == Qt::Checked ? commit(checkedSpecs()) : QString();
        if (!error.isEmpty()) {  // e.g. the last method: put it back
            updating_ = true;
            specs_.insert(specs_.begin() + row, spec);
            auto* item = new QListWidgetItem(methodTitle(spec, controller_->config().stages));
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(state);
            list_->insertItem(row, item);
            list_->setCurrentRow(row);
            updating_ = false;
            errors_.show(step_, tr("Cannot remove the method: %1").arg(error));
            return;
        }
        showCurrent();
    });
    // A grid's choice is known when its run ends: the γ field then shows it.
    connect(controller_, &ExperimentController::resultsReady, this, [this] { showCurrent(); });
    connect(step_, &LogSlider::valueEdited, this,
            [this](double v) { editCurrent(step_, [v](MethodSpec& m) { m.step.value = v; }); });
    connect(grid_, &QCheckBox::toggled, this, [this](bool on) {
        // Unticked, the method keeps running at the γ the grid chose (a grid-tuned preset has
        // no fixed γ of its own).
        const double chosen = on ? 0.0 : gridChoice(list_->currentRow());
        editCurrent(grid_->parentWidget(), [this, on, chosen](MethodSpec& m) {
            m.step.grid = on;
            m.step.gridMin = gridMin_->value();
            m.step.gridMax = gridMax_->value();
            if (!on && chosen > 0.0) m.step.value = chosen;
        });
        if (!on) showCurrent();  // the γ field shows the γ kept
    });
    auto gridRange = [this] {
        editCurrent(grid_->parentWidget(), [this](MethodSpec& m) {
            m.step.gridMin = gridMin_->value();
            m.step.gridMax = gridMax_->value();
        });
    };
    connect(gridMin_, &QSpinBox::valueChanged, this, gridRange);
    connect(gridMax_, &QSpinBox::valueChanged, this, gridRange);
    connect(noam_, &QSpinBox::valueChanged, this,
            [this](int v) { editCurrent(noam_, [v](MethodSpec& m) { m.noam = v; }); });
    connect(delayMode_, &QComboBox::currentIndexChanged, this, [this] {
        const std::string mode = delayMode_->currentData().toString().toStdString();
        editCurrent(delayMode_, [mode](MethodSpec& m) { m.delayMode = parseDelayMode(mode); });
    });
    connect(delta_, &QSpinBox::valueChanged, this,
            [this](int v) { editCurrent(delta_, [v](MethodSpec& m) { m.delta = v; }); });
    connect(order_, &QComboBox::currentIndexChanged, this, [this] {
        const std::string order = order_->currentData().toString().toStdString();
        editCurrent(order_, [order](MethodSpec& m) { m.order = parseStageOrder(order); });
    });
    connect(replicas_, &QSpinBox::valueChanged, this,
            [this](int v) { editCurrent(replicas_, [v](MethodSpec& m) { m.replicas = v; }); });
    connect(localSteps_, &QSpinBox::valueChanged, this,
            [this](int v) { editCurrent(localSteps_, [v](MethodSpec& m) { m.localSteps = v; }); });
    connect(flushGroup_, &QSpinBox::valueChanged, this,
            [this](int v) { editCurrent(flushGroup_, [v](MethodSpec& m) { m.flushGroup = v; }); });
    connect(virtualStages_, &QSpinBox::valueChanged, this, [this](int v) {
        editCurrent(virtualStages_, [v](MethodSpec& m) { m.virtualStages = v; });
    });
    connect(accumulation_, &QSpinBox::valueChanged, this, [this](int v) {
        editCurrent(accumulation_, [v](MethodSpec& m) { m.accumulation = v; });
    });
    connect(scheduleFile_, &QLineEdit::editingFinished, this, [this] {
        if (scheduleFile_->isModified()) setScheduleFile(scheduleFile_->text().trimmed());
        scheduleFile_->setModified(false);
    });
    connect(browseSchedule_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open a PyTorch schedule"), QFileInfo(scheduleFile_->text()).path(),
            tr("Schedule CSV (*.csv);;All files (*)"));
        if (!path.isEmpty()) setScheduleFile(path);
    });
    connect(update_, &QComboBox::currentIndexChanged, this, [this] {
        const bool async = update_->currentData().toString() == QLatin1String("async");
        editCurrent(update_, [async](MethodSpec& m) { m.asyncUpdate = async; });
    });
    syncFromConfig();
}

void MethodListEditor::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    fitEditorHeight();
}

void MethodListEditor::fitEditorHeight() {
    form_->invalidate();
    if (!form_->hasHeightForWidth() || editor_->width() <= 0) return;
    const int height = form_->totalHeightForWidth(editor_->width());
    if (height > 0 && height != editor_->minimumHeight()) editor_->setMinimumHeight(height);
}

void MethodListEditor::setMessageArea(QLabel* area) {
    errors_.setMessageArea(area);
    step_->setShowsError(false);
    connect(step_, &LogSlider::errorChanged, this,
            [this](const QString& message) { errors_.show(step_, message); });
}

std::vector<MethodSpec> MethodListEditor::checkedSpecs() const {
    std::vector<MethodSpec> out;
    for (int i = 0; i < list_->count(); ++i) {
        if (list_->item(i)->checkState() == Qt::Checked) out.push_back(specs_[i]);
    }
    return out;
}

QString MethodListEditor::commit(const std::vector<MethodSpec>& specs) {
    return controller_->tryModify([&](ExperimentConfig& c) { c.methods = specs; });
}

void MethodListEditor::syncFromConfig() {
    const ExperimentConfig& c = controller_->config();
    updating_ = true;
    if (!sameMethods(checkedSpecs(), c.methods)) {
        const int row = list_->currentRow();
        list_->clear();
        specs_ = c.methods;
        for (const MethodSpec& m : specs_) {
            auto* item = new QListWidgetItem(methodTitle(m, c.stages), list_);
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(Qt::Checked);
        }
        list_->setCurrentRow(std::clamp(row, 0, list_->count() - 1));
        errors_.clearAll();
    }
    for (int i = 0; i < list_->count(); ++i) {
        list_->item(i)->setText(methodTitle(specs_[i], c.stages));
    }
    updating_ = false;
    showCurrent();
}

void MethodListEditor::addMethod(Method method) {
    MethodSpec m;
    m.method = method;
    const int current = list_->currentRow();
    m.step.value = current >= 0 ? specs_[static_cast<size_t>(current)].step.value : 0.1;
    if (!(m.step.value > 0.0)) m.step.value = 0.1;
    // Put it in the list first, so the list matches the config when configChanged arrives.
    updating_ = true;
    specs_.push_back(m);
    auto* item = new QListWidgetItem(methodTitle(m, controller_->config().stages), list_);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    // The engine refuses an imported schedule without its file: it waits, unchecked, for one.
    const bool waitsForFile = method == Method::Imported;
    item->setCheckState(waitsForFile ? Qt::Unchecked : Qt::Checked);
    updating_ = false;
    if (waitsForFile) {
        list_->setCurrentRow(list_->count() - 1);
        scheduleFile_->setFocus();
        return;
    }
    const QString error = commit(checkedSpecs());
    if (!error.isEmpty()) {
        updating_ = true;
        specs_.pop_back();
        delete list_->takeItem(list_->count() - 1);
        updating_ = false;
        errors_.show(step_, tr("Cannot add the method: %1").arg(error));
        return;
    }
    list_->setCurrentRow(list_->count() - 1);
}

void MethodListEditor::onItemChanged(QListWidgetItem* item) {
    if (updating_) return;
    const QString error = commit(checkedSpecs());
    if (!error.isEmpty()) {
        updating_ = true;  // refuse: restore the check mark
        item->setCheckState(item->checkState() == Qt::Checked ? Qt::Unchecked : Qt::Checked);
        updating_ = false;
        errors_.show(step_, tr("Cannot change the method list: %1").arg(error));
    }
}

void MethodListEditor::setScheduleFile(const QString& path) {
    const int row = list_->currentRow();
    if (updating_ || row < 0 || specs_[static_cast<size_t>(row)].method != Method::Imported) return;
    QListWidgetItem* item = list_->item(row);
    const std::string file = path.toStdString();
    if (item->checkState() == Qt::Checked) {
        editCurrent(scheduleFile_->parentWidget(),
                    [&file](MethodSpec& m) { m.scheduleFile = file; });
        showCurrent();  // a refused file: the field shows the one kept
        return;
    }
    // Unchecked (just added): run it if the engine accepts the file.
    MethodSpec& spec = specs_[static_cast<size_t>(row)];
    const MethodSpec before = spec;
    spec.scheduleFile = file;
    updating_ = true;
    item->setCheckState(Qt::Checked);
    updating_ = false;
    const QString error = commit(checkedSpecs());
    if (!error.isEmpty()) {
        updating_ = true;
        item->setCheckState(Qt::Unchecked);
        updating_ = false;
        // Kept, so that the field shows what was refused; it runs once a file is accepted.
        errors_.show(scheduleFile_->parentWidget(), error);
        showCurrent();
        return;
    }
    errors_.clearAll();
    item->setText(methodTitle(spec, controller_->config().stages));
    showCurrent();
}

bool MethodListEditor::compareWithUncorrected() {
    const int row = list_->currentRow();
    if (updating_ || row < 0) return false;
    const MethodSpec corrected = specs_[static_cast<size_t>(row)];
    QWidget* button = picker_->compareButton();
    if (!corrected.correctors.any()) {
        errors_.show(button, tr("%1 has no correctors: tick one first")
                                 .arg(methodTitle(corrected, controller_->config().stages)));
        return false;
    }
    // Listed already: check it if it is not.
    for (int i = 0; i < list_->count(); ++i) {
        if (!isUncorrectedTwin(specs_[static_cast<size_t>(i)], corrected)) continue;
        if (list_->item(i)->checkState() != Qt::Checked) {
            list_->item(i)->setCheckState(Qt::Checked);  // commits (onItemChanged)
            if (list_->item(i)->checkState() != Qt::Checked) return false;
        }
        errors_.clearAll();
        return true;
    }
    const MethodSpec twin = uncorrectedTwin(corrected, controller_->config().stages);
    updating_ = true;
    specs_.insert(specs_.begin() + row + 1, twin);
    auto* item = new QListWidgetItem(methodTitle(twin, controller_->config().stages));
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
    list_->insertItem(row + 1, item);
    list_->setCurrentRow(row);
    updating_ = false;
    const QString error = commit(checkedSpecs());
    if (!error.isEmpty()) {
        updating_ = true;
        specs_.erase(specs_.begin() + row + 1);
        delete list_->takeItem(row + 1);
        list_->setCurrentRow(row);
        updating_ = false;
        errors_.show(button, tr("Cannot add the uncorrected method: %1").arg(error));
        return false;
    }
    errors_.clearAll();
    return true;
}

bool MethodListEditor::rowShown(QWidget* field) const {
    for (QWidget* w = field; w; w = w->parentWidget()) {
        if (w->parentWidget() == editor_) return form_->isRowVisible(w);
    }
    return false;
}

double MethodListEditor::gridChoice(int row) const {
    if (row < 0 || row >= static_cast<int>(specs_.size())) return 0.0;
    const MethodSpec& spec = specs_[static_cast<size_t>(row)];
    if (!spec.step.grid) return spec.step.value;
    // Its index among the methods that ran (the checked ones, in order).
    int index = 0;
    for (int i = 0; i < row; ++i) index += list_->item(i)->checkState() == Qt::Checked ? 1 : 0;
    const SnapshotPtr s = controller_->latest();
    const bool ran = list_->item(row)->checkState() == Qt::Checked && s &&
                     index < static_cast<int>(s->runs().size()) &&
                     s->runs()[static_cast<size_t>(index)].spec.method == spec.method;
    if (ran) {
        const MethodRun& run = s->runs()[static_cast<size_t>(index)];
        if (run.chosen >= 0 && run.chosen < static_cast<int>(run.grid.size()))
            return run.grid[static_cast<size_t>(run.chosen)].stepSize;
    }
    // Not run yet: the middle of the grid.
    return std::ldexp(1.0, (spec.step.gridMin + spec.step.gridMax) / 2);
}

void MethodListEditor::editCurrent(QWidget* field, const std::function<void(MethodSpec&)>& change) {
    if (updating_) return;
    const int row = list_->currentRow();
    if (row < 0) return;
    const MethodSpec before = specs_[static_cast<size_t>(row)];
    MethodSpec& spec = specs_[static_cast<size_t>(row)];
    change(spec);
    if (list_->item(row)->checkState() == Qt::Checked) {
        const QString error = commit(checkedSpecs());
        if (!error.isEmpty()) {
            specs_[static_cast<size_t>(row)] = before;
            errors_.show(field, error);
            return;
        }
    }
    // The config is valid now: every earlier refusal of this editor is resolved too.
    errors_.clearAll();
    list_->item(row)->setText(
        methodTitle(specs_[static_cast<size_t>(row)], controller_->config().stages));
}

void MethodListEditor::showCurrent() {
    const int row = list_->currentRow();
    remove_->setEnabled(row >= 0);
    editor_->setEnabled(row >= 0);
    if (row < 0 || row >= static_cast<int>(specs_.size())) return;
    const MethodSpec& m = specs_[static_cast<size_t>(row)];
    const bool wasUpdating = updating_;
    updating_ = true;
    // A grid shows the γ it chose in the last run (the value it will keep if unticked).
    const double shown = m.step.grid ? gridChoice(row) : m.step.value;
    step_->setValue(shown > 0.0 ? shown : m.step.value > 0.0 ? m.step.value : step_->minimum());
    grid_->setChecked(m.step.grid);
    gridMin_->setValue(m.step.gridMin);
    gridMax_->setValue(m.step.gridMax);
    noam_->setValue(m.noam);
    delayMode_->setCurrentIndex(
        delayMode_->findData(QString::fromStdString(delayModeName(m.delayMode))));
    delta_->setValue(static_cast<int>(m.delta));
    order_->setCurrentIndex(order_->findData(QString::fromStdString(stageOrderName(m.order))));
    replicas_->setValue(m.replicas);
    localSteps_->setValue(m.localSteps);
    flushGroup_->setValue(m.flushGroup);
    accumulation_->setValue(m.accumulation);
    virtualStages_->setValue(m.virtualStages);
    scheduleFile_->setText(QString::fromStdString(m.scheduleFile));
    scheduleFile_->setModified(false);
    update_->setCurrentIndex(update_->findData(m.asyncUpdate ? "async" : "sync"));
    form_->setRowVisible(noam_, m.method == Method::PipeDream);
    for (QWidget* w : {static_cast<QWidget*>(delayMode_), static_cast<QWidget*>(delta_),
                       static_cast<QWidget*>(order_)}) {
        form_->setRowVisible(w, m.method == Method::RandomizedPipeDream);
    }
    form_->setRowVisible(replicas_, m.method == Method::LocalSgd);
    form_->setRowVisible(localSteps_, m.method == Method::LocalSgd);
    form_->setRowVisible(flushGroup_,
                         m.method == Method::FillDrain || m.method == Method::OneFOneB ||
                             m.method == Method::ZeroBubbleH1 || m.method == Method::Interleaved);
    form_->setRowVisible(virtualStages_, m.method == Method::Interleaved);
    form_->setRowVisible(accumulation_, m.method == Method::TwoBw);
    form_->setRowVisible(scheduleFile_->parentWidget(), m.method == Method::Imported);
    form_->setRowVisible(update_, m.method == Method::Imported);
    picker_->show(m);
    fitEditorHeight();
    updating_ = wasUpdating;
}

}  // namespace pipelens::ui
