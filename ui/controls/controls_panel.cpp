#include "controls/controls_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <cmath>

#include "controllers/experiment_controller.hpp"
#include "controls/device_list.hpp"
#include "controls/lm_objective_fields.hpp"
#include "controls/log_slider.hpp"
#include "controls/method_list_editor.hpp"
#include "controls/number_text.hpp"
#include "experiment/step_size/step_scale.hpp"

namespace pipelens::ui {
namespace {

// Combos sized by a short minimum, not by their longest item, so the dock can stay narrow.
QComboBox* combo() {
    auto* c = new QComboBox;
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(12);
    return c;
}

QFormLayout* group(QVBoxLayout* into, const QString& title) {
    auto* box = new QGroupBox(title);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A field too wide beside its label goes under it: the dock stays narrow, nothing is cut.
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    into->addWidget(box);
    return form;
}

}  // namespace

ControlsPanel::ControlsPanel(ExperimentController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    buildMessageArea(layout);
    buildMethods(layout);
    buildDataFields(layout);
    buildPipelineFields(layout);
    buildComputeFields(layout);
    layout->addStretch();
    connectDataEdits();
    connectPipelineEdits();
    connectComputeEdits();
    connect(controller_, &ExperimentController::configChanged, this,
            &ControlsPanel::syncFromConfig);
    syncFromConfig();
}

void ControlsPanel::buildMessageArea(QVBoxLayout* layout) {
    // Refusals show here, in a place of their own with its height reserved: a message never
    // moves the fields (the window puts the area above the scrolled panel).
    messageArea_ = new QLabel(this);
    messageArea_->setObjectName("fieldMessages");
    messageArea_->setWordWrap(true);
    messageArea_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    messageArea_->setStyleSheet("color: #b00020;");
    messageArea_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    messageArea_->setFixedHeight(3 * messageArea_->fontMetrics().lineSpacing() + 4);
    messageArea_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    errors_.setMessageArea(messageArea_);
    layout->addWidget(messageArea_);
}

void ControlsPanel::buildMethods(QVBoxLayout* layout) {
    // Methods first: the selected method's γ is in sight without scrolling.
    auto* methodsBox = new QGroupBox(tr("Methods to compare"));
    auto* methodsLayout = new QVBoxLayout(methodsBox);
    methods_ = new MethodListEditor(controller_, methodsBox);
    methods_->setMessageArea(messageArea_);
    stepScale_ = combo();
    stepScale_->setMinimumContentsLength(6);
    for (int k = -4; k <= 4; ++k) {
        stepScale_->addItem(k < 0 ? QStringLiteral("1/%1").arg(1 << -k) : QString::number(1 << k),
                            k);
    }
    stepScale_->setCurrentIndex(stepScale_->findData(0));
    // Above the list: in sight without scrolling past the selected method's fields.
    auto* scaleForm = new QFormLayout;
    scaleForm->setRowWrapPolicy(QFormLayout::WrapLongRows);
    methodsLayout->addLayout(scaleForm);
    errors_.addRow(scaleForm, tr("All γ ×"), stepScale_,
                   tr("Multiplies every method's γ at once (raise them together and watch which "
                      "method blows up first). A grid-tuned method's grid 2^[a, b] shifts by the "
                      "same factor."));
    methodsLayout->addWidget(methods_);
    connect(stepScale_, &QComboBox::currentIndexChanged, this, [this] {
        const int wanted = stepScale_->currentData().toInt();
        const int by = wanted - appliedScale_;
        if (by == 0 || updating_) return;
        const QString error =
            controller_->tryModify([by](ExperimentConfig& c) { scaleStepSizes(c, by); });
        if (error.isEmpty()) appliedScale_ = wanted;
        errors_.show(stepScale_, error);
    });
    layout->addWidget(methodsBox);
}

void ControlsPanel::buildDataFields(QVBoxLayout* layout) {
    // Objective and data.
    QFormLayout* data = group(layout, tr("Objective and data"));
    objective_ = combo();
    objective_->addItem(tr("Least squares (quadratic)"), "quadratic");
    objective_->addItem(tr("Logistic regression"), "logistic");
    objective_->addItem(tr("Language model (character transformer)"), "char_transformer");
    errors_.addRow(data, tr("Objective"), objective_,
                   tr("f(w) = ½·mean((Xw − y)²), or mean(softplus(Xw) − y·Xw) + (λ/2)‖w‖², or "
                      "a character-level transformer cut into S stages (next-character "
                      "cross-entropy)"));
    dataForm_ = data;
    dataKind_ = combo();
    dataKind_->addItem(tr("Synthetic: random"), "random");
    dataKind_->addItem(tr("Synthetic: simple spectrum"), "simple");
    dataKind_->addItem(tr("Synthetic: tridiagonal Hessian"), "tridiagonal");
    dataKind_->addItem(tr("Synthetic: logistic"), "logistic");
    dataKind_->addItem(tr("File (.npy, .csv, LIBSVM)"), "file");
    errors_.addRow(data, tr("Data"), dataKind_,
                   tr("A synthetic data set (SPEC §1) or your own X and y from a file"));
    QWidget* fileRow = fileChooserRow(tr("(no file)"), &dataFile_, &browse_);
    errors_.addRow(data, tr("File"), fileRow,
                   tr("CSV (label in the last column), LIBSVM (.svm/.libsvm/.txt), or a pair of "
                      ".npy files (X, then y)"));
    rows_ = spin(limits::kRows);
    errors_.addRow(data, tr("Rows n"), rows_,
                   tr("Number of data rows; must be a multiple of the batch size"));
    dim_ = spin(limits::kDim);
    errors_.addRow(data, tr("Dimension d"), dim_,
                   tr("Number of model coordinates, cut into S blocks (needs d ≥ S)"));
    l2_ = new QLineEdit;
    errors_.addRow(data, tr("λ (L2)"), l2_,
                   tr("L2 regularisation of logistic regression (a number ≥ 0); Enter applies"));
    noise_ = new QLineEdit;
    errors_.addRow(data, tr("Gradient noise σ"), noise_,
                   tr("Gaussian noise added to every block gradient, g + σ·N(0, I), as in the "
                      "paper's E3 and E4 (a number ≥ 0; 0: exact gradients); Enter applies"));
    dataSeed_ = spin(limits::kSeed);
    errors_.addRow(data, tr("Data seed"), dataSeed_, tr("Seed of the synthetic data generator"));

    // The language model's own fields, in place of the data's when it is the objective.
    lm_ = new LmObjectiveFields(controller_, messageArea_);
    layout->addWidget(lm_);
}

void ControlsPanel::buildPipelineFields(QVBoxLayout* layout) {
    // Pipeline and budget.
    QFormLayout* pipe = group(layout, tr("Pipeline and budget"));
    auto* stagesRow = new QWidget;
    auto* stagesLayout = new QHBoxLayout(stagesRow);
    stagesLayout->setContentsMargins(0, 0, 0, 0);
    stages_ = spin(limits::kStages);
    stagesSlider_ = new QSlider(Qt::Horizontal);
    stagesSlider_->setRange(1, 128);
    stagesSlider_->setToolTip(tr("Drag to change S (1 to 128); the type-in field goes higher"));
    stagesLayout->addWidget(stagesSlider_, 1);
    stagesLayout->addWidget(stages_);
    errors_.addRow(pipe, tr("Stages S"), stagesRow,
                   tr("Pipeline stages (devices); each holds one block of the parameters"));
    batch_ = spin(limits::kBatchSize);
    errors_.addRow(pipe, tr("Batch size b"), batch_,
                   tr("Rows per microbatch; the data set is cut into M = n / b batches"));
    // What an operation costs in slots, and the link between neighbouring stages: the slot
    // model's defaults (1, 1, 0) are the paper's.
    forwardSlots_ = spin(limits::kOpSlots);
    errors_.addRow(pipe, tr("Forward cost"), forwardSlots_,
                   tr("Slots one forward takes on a stage (the paper's model: 1)"));
    backwardSlots_ = spin(limits::kOpSlots);
    errors_.addRow(pipe, tr("Backward cost"), backwardSlots_,
                   tr("Slots one backward takes on a stage (the paper's model: 1; in practice "
                      "often 2, a backward computing two gradients)"));
    weightSlots_ = spin(limits::kOpSlots);
    errors_.addRow(pipe, tr("Weight-gradient cost"), weightSlots_,
                   tr("Where a backward is split (ZB-H1, imported I/W schedules): slots its "
                      "weight-gradient half W takes; the input-gradient half I takes the rest of "
                      "the backward cost (at least 1)"));
    latencySlots_ = spin(limits::kLatencySlots);
    errors_.addRow(pipe, tr("Link latency"), latencySlots_,
                   tr("Slots between a stage finishing an operation and its neighbour being able "
                      "to use the result (activations forward, gradients back; the paper's "
                      "model: 0)"));
    budgetKind_ = combo();
    budgetKind_->addItem(tr("Epochs of PipeDream"), "epochs");
    budgetKind_->addItem(tr("PipeDream microbatches"), "microbatches");
    budgetKind_->addItem(tr("Slots (simulated time)"), "slots");
    errors_.addRow(pipe, tr("Budget"), budgetKind_,
                   tr("How long every method runs: PipeDream's run length for a number of "
                      "epochs or microbatches, or a number of slots"));
    budget_ = new QDoubleSpinBox;
    budget_->setKeyboardTracking(false);
    // One box for the three budget kinds, whose ranges agree (checked here).
    static_assert(limits::kSlots.hi == limits::kMicrobatches.hi &&
                  limits::kEpochs.hi == static_cast<double>(limits::kSlots.hi));
    budget_->setRange(0.0, limits::kEpochs.hi);
    errors_.addRow(pipe, tr("Amount"), budget_,
                   tr("Epochs (may be fractional), microbatches or "
                      "slots, depending on the budget kind"));
    compare_ = combo();
    compare_->addItem(tr("Equal simulated time"), "time");
    compare_->addItem(tr("Equal block updates"), "updates");
    errors_.addRow(pipe, tr("Compare at"), compare_,
                   tr("Each method gets as many microbatches as fit in the time, or the same "
                      "number of microbatches as PipeDream"));
    budgetRule_ = combo();
    budgetRule_->addItem(tr("Fit"), "fit");
    budgetRule_->setItemData(0,
                             tr("Each pipeline method runs the largest number of microbatches "
                                "whose whole run fits in the budget"),
                             Qt::ToolTipRole);
    budgetRule_->addItem(tr("Truncate"), "truncate");
    budgetRule_->setItemData(1,
                             tr("Each pipeline method runs a longer timeline cut after the "
                                "budget's last slot; microbatches in flight never finish"),
                             Qt::ToolTipRole);
    budgetRule_->addItem(tr("Reach"), "reach");
    budgetRule_->setItemData(2,
                             tr("Each pipeline method runs, whole, the smallest number of "
                                "microbatches whose run lasts at least the budget (it may end "
                                "a few slots after it)"),
                             Qt::ToolTipRole);
    errors_.addRow(pipe, tr("Budget rule"), budgetRule_,
                   tr("How a pipeline method meets the slot budget under Equal simulated time "
                      "(for an epoch or microbatch budget, the slot budget is PipeDream's run "
                      "length): Fit, Truncate or Reach; RPD runs PipeDream's block updates"));
    seed_ = new QLineEdit;
    errors_.addRow(pipe, tr("Seed"), seed_,
                   tr("The experiment seed (RPD draws, shuffling): an integer ≥ 0; Enter applies"));
    shuffle_ = new QCheckBox(tr("Shuffle batches every epoch"));
    errors_.addRow(pipe, QString(), shuffle_, tr("A fresh permutation of the M batches per epoch"));
}

void ControlsPanel::buildComputeFields(QVBoxLayout* layout) {
    // Compute.
    QFormLayout* compute = group(layout, tr("Compute"));
    device_ = combo();
    device_->addItem(tr("Auto (OpenCL if present, else CPU)"), "auto");
    device_->addItem(tr("CPU engine"), "cpu");
    device_->addItem(tr("OpenCL, first device (falls back to the CPU engine)"), "opencl");
    for (const DeviceEntry& d : openClDevices()) {
        device_->addItem(tr("OpenCL %1 — %2").arg(d.index, d.text), "opencl:" + d.index);
    }
    if (!haveOpenClBackend()) {
        device_->setItemData(2, tr("This build has no OpenCL backend: runs use the CPU engine"),
                             Qt::ToolTipRole);
    }
    errors_.addRow(compute, tr("Device"), device_,
                   tr("Where the forward, backward and update work runs; the status bar says "
                      "which backend was used"));
    precision_ = combo();
    precision_->addItem(tr("double"), "double");
    precision_->addItem(tr("float (OpenCL only)"), "float");
    errors_.addRow(compute, tr("Precision"), precision_, tr("Floating point type on OpenCL"));
}

// Edits -> controller: each field changes its key through apply (one validation, in core).
void ControlsPanel::connectDataEdits() {
    connect(objective_, &QComboBox::currentIndexChanged, this, [this] {
        const QString kind = objective_->currentData().toString();
        if (kind == "char_transformer") {
            apply(objective_, &LmObjectiveFields::switchToLanguageModel);
            return;
        }
        const bool logistic = kind == "logistic";
        apply(objective_, [logistic](ExperimentConfig& c) {
            if (c.languageModel()) c.sampling.blowUpFactor = 1e6;  // × the initial gap
            c.objective.languageModel.reset();
            c.objective.loss = logistic ? LossKind::Logistic : LossKind::Quadratic;
            c.objective.l2 = logistic ? 1e-4 : 0.0;
            // Logistic regression needs 0/1 labels: switch the synthetic kind along with it.
            if (c.data.source == DataSource::Synthetic) {
                if (logistic)
                    c.data.kind = "logistic";
                else if (c.data.kind == "logistic")
                    c.data.kind = "random";
            }
        });
    });
    connect(dataKind_, &QComboBox::currentIndexChanged, this, [this] {
        const std::string kind = dataKind_->currentData().toString().toStdString();
        if (kind == "file") {
            chooseDataFile();
            return;
        }
        apply(dataKind_, [kind](ExperimentConfig& c) {
            c.data.source = DataSource::Synthetic;
            c.data.kind = kind;
        });
    });
    connect(browse_, &QPushButton::clicked, this, &ControlsPanel::chooseDataFile);
    connect(rows_, &QSpinBox::valueChanged, this,
            [this](int v) { apply(rows_, [v](ExperimentConfig& c) { c.data.rows = v; }); });
    connect(dim_, &QSpinBox::valueChanged, this,
            [this](int v) { apply(dim_, [v](ExperimentConfig& c) { c.data.dim = v; }); });
    connect(l2_, &QLineEdit::editingFinished, this, [this] {
        bool ok = false;
        const double v = l2_->text().trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(v) || v < 0.0) {
            errors_.show(l2_,
                         tr("λ = \"%1\" is not allowed: a finite number ≥ 0").arg(l2_->text()));
            return;
        }
        apply(l2_, [v](ExperimentConfig& c) { c.objective.l2 = v; });
    });
    connect(noise_, &QLineEdit::editingFinished, this, [this] {
        bool ok = false;
        const double v = noise_->text().trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(v)) {
            errors_.show(noise_,
                         tr("Gradient noise σ = \"%1\" is not allowed: %2")
                             .arg(noise_->text(),
                                  QString::fromUtf8(limits::kGradientNoise.allowed.data(),
                                                    static_cast<qsizetype>(
                                                        limits::kGradientNoise.allowed.size()))));
            return;
        }
        apply(noise_, [v](ExperimentConfig& c) { c.objective.gradientNoise = v; });
    });
    connect(dataSeed_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(dataSeed_, [v](ExperimentConfig& c) { c.data.seed = static_cast<std::uint64_t>(v); });
    });
}

void ControlsPanel::connectPipelineEdits() {
    auto setStages = [this](int v) {
        apply(stages_->parentWidget(), [v](ExperimentConfig& c) { c.stages = v; });
    };
    connect(stages_, &QSpinBox::valueChanged, this, setStages);
    connect(stagesSlider_, &QSlider::valueChanged, this, [this, setStages](int v) {
        if (updating_) return;
        const QSignalBlocker block(stages_);
        stages_->setValue(v);
        setStages(v);
    });
    connect(batch_, &QSpinBox::valueChanged, this,
            [this](int v) { apply(batch_, [v](ExperimentConfig& c) { c.batchSize = v; }); });
    connect(forwardSlots_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(forwardSlots_, [v](ExperimentConfig& c) { c.costs.forwardSlots = v; });
    });
    connect(backwardSlots_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(backwardSlots_, [v](ExperimentConfig& c) { c.costs.backwardSlots = v; });
    });
    connect(weightSlots_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(weightSlots_, [v](ExperimentConfig& c) { c.costs.weightSlots = v; });
    });
    connect(latencySlots_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(latencySlots_, [v](ExperimentConfig& c) { c.costs.latencySlots = v; });
    });
    auto setBudget = [this] {
        const QString kind = budgetKind_->currentData().toString();
        const double v = budget_->value();
        apply(budget_, [kind, v](ExperimentConfig& c) {
            c.budget.totalSlots = kind == "slots" ? static_cast<int>(std::lround(v)) : 0;
            c.budget.microbatches = kind == "microbatches" ? static_cast<int>(std::lround(v)) : 0;
            c.budget.epochs = kind == "epochs" ? v : 0.0;
        });
    };
    connect(budgetKind_, &QComboBox::currentIndexChanged, this, [this, setBudget] {
        if (updating_) return;
        const QString kind = budgetKind_->currentData().toString();
        const QSignalBlocker block(budget_);
        budget_->setDecimals(kind == "epochs" ? 2 : 0);
        budget_->setValue(kind == "epochs" ? 5.0 : kind == "microbatches" ? 300.0 : 1000.0);
        setBudget();
    });
    connect(budget_, &QDoubleSpinBox::valueChanged, this, setBudget);
    connect(compare_, &QComboBox::currentIndexChanged, this, [this] {
        const auto v = parseEnum(kBudgetCompares, compare_->currentData().toString().toStdString());
        if (v) apply(compare_, [v](ExperimentConfig& c) { c.budget.compare = *v; });
    });
    connect(budgetRule_, &QComboBox::currentIndexChanged, this, [this] {
        const auto v = parseEnum(kBudgetRules, budgetRule_->currentData().toString().toStdString());
        if (v) apply(budgetRule_, [v](ExperimentConfig& c) { c.budget.rule = *v; });
    });
    connect(seed_, &QLineEdit::editingFinished, this, [this] {
        bool ok = false;
        const qulonglong v = seed_->text().trimmed().toULongLong(&ok);
        if (!ok || v > 1'000'000'000'000ULL) {
            errors_.show(
                seed_,
                tr("Seed = \"%1\" is not allowed: an integer from 0 to 10^12").arg(seed_->text()));
            return;
        }
        apply(seed_, [v](ExperimentConfig& c) { c.seed = v; });
    });
    connect(shuffle_, &QCheckBox::toggled, this,
            [this](bool on) { apply(shuffle_, [on](ExperimentConfig& c) { c.shuffle = on; }); });
}

void ControlsPanel::connectComputeEdits() {
    connect(device_, &QComboBox::currentIndexChanged, this, [this] {
        const QStringList v = device_->currentData().toString().split(':');
        const auto backend = parseEnum(kBackends, v[0].toStdString());
        if (!backend) return;
        apply(device_, [v, backend](ExperimentConfig& c) {
            c.backend = *backend;
            c.device = v.size() > 1 ? v[1].toStdString() : std::string();
        });
    });
    connect(precision_, &QComboBox::currentIndexChanged, this, [this] {
        const auto v = parseEnum(kPrecisions, precision_->currentData().toString().toStdString());
        if (v) apply(precision_, [v](ExperimentConfig& c) { c.precision = *v; });
    });
}

void ControlsPanel::resetStepScale() {
    appliedScale_ = 0;
    const QSignalBlocker block(stepScale_);
    stepScale_->setCurrentIndex(stepScale_->findData(0));
    errors_.show(stepScale_, QString());
}

void ControlsPanel::apply(QWidget* field, const std::function<void(ExperimentConfig&)>& change) {
    if (updating_) return;
    const QString error = controller_->tryModify(change);
    errors_.show(field, error);
}

void ControlsPanel::chooseDataFile() {
    const QString x =
        QFileDialog::getOpenFileName(this, tr("Open a data file"), QString(),
                                     tr("Data (*.npy *.csv *.svm *.libsvm *.txt);;All files (*)"));
    if (x.isEmpty()) {
        syncFromConfig();  // back to what the config says
        return;
    }
    const QString suffix = QFileInfo(x).suffix().toLower();
    QString y;
    if (suffix == "npy") {
        y = QFileDialog::getOpenFileName(this, tr("Open the labels (y) .npy file"),
                                         QFileInfo(x).absolutePath(), tr("NumPy (*.npy)"));
        if (y.isEmpty()) {
            syncFromConfig();
            return;
        }
    }
    const DataSource source = suffix == "npy"   ? DataSource::Npy
                              : suffix == "csv" ? DataSource::Csv
                                                : DataSource::Libsvm;
    apply(dataKind_, [&](ExperimentConfig& c) {
        c.data.source = source;
        c.data.x = QFileInfo(x).absoluteFilePath().toStdString();
        c.data.y = y.isEmpty() ? std::string() : QFileInfo(y).absoluteFilePath().toStdString();
    });
}

void ControlsPanel::syncFromConfig() {
    const ExperimentConfig& c = controller_->config();
    updating_ = true;
    const QSignalBlocker b1(objective_), b2(dataKind_), b3(rows_), b4(dim_), b5(dataSeed_),
        b6(stages_), b7(stagesSlider_), b8(batch_), b9(budgetKind_), b10(budget_), b11(compare_),
        b12(shuffle_), b13(device_), b14(precision_), b15(forwardSlots_), b16(backwardSlots_),
        b17(latencySlots_), b18(budgetRule_), b19(weightSlots_);
    const bool lm = c.languageModel();
    objective_->setCurrentIndex(
        objective_->findData(lm ? QStringLiteral("char_transformer")
                                : QString::fromStdString(lossKindName(c.objective.loss))));
    // The language model reads its corpus, not X and y: its own fields replace the data's.
    for (QWidget* w :
         {static_cast<QWidget*>(dataKind_), dataFile_->parentWidget(), static_cast<QWidget*>(rows_),
          static_cast<QWidget*>(dim_), static_cast<QWidget*>(l2_), static_cast<QWidget*>(noise_),
          static_cast<QWidget*>(dataSeed_)}) {
        dataForm_->setRowVisible(w, !lm);
    }
    lm_->setVisible(lm);
    lm_->syncFromConfig();
    shuffle_->setEnabled(!lm);
    const bool synthetic = c.data.source == DataSource::Synthetic;
    dataKind_->setCurrentIndex(
        dataKind_->findData(synthetic ? QString::fromStdString(c.data.kind) : QString("file")));
    dataFile_->setText(synthetic ? tr("(synthetic)")
                                 : QFileInfo(QString::fromStdString(c.data.x)).fileName());
    dataFile_->setToolTip(
        QString::fromStdString(c.data.x + (c.data.y.empty() ? "" : "\n" + c.data.y)));
    rows_->setEnabled(synthetic);
    dim_->setEnabled(synthetic);
    dataSeed_->setEnabled(synthetic);
    rows_->setValue(c.data.rows);
    dim_->setValue(c.data.dim);
    dataSeed_->setValue(static_cast<int>(std::min<std::uint64_t>(c.data.seed, 2'000'000'000)));
    l2_->setText(formatNumber(c.objective.l2));
    noise_->setText(formatNumber(c.objective.gradientNoise));
    l2_->setEnabled(c.objective.loss == LossKind::Logistic);
    stages_->setValue(c.stages);
    stagesSlider_->setValue(std::min(c.stages, stagesSlider_->maximum()));
    batch_->setValue(c.batchSize);
    forwardSlots_->setValue(c.costs.forwardSlots);
    backwardSlots_->setValue(c.costs.backwardSlots);
    weightSlots_->setValue(c.costs.weightSlots);
    latencySlots_->setValue(c.costs.latencySlots);
    QString kind = c.budget.totalSlots > 0     ? "slots"
                   : c.budget.microbatches > 0 ? "microbatches"
                                               : "epochs";
    budgetKind_->setCurrentIndex(budgetKind_->findData(kind));
    budget_->setDecimals(kind == "epochs" ? 2 : 0);
    budget_->setValue(kind == "slots"          ? c.budget.totalSlots
                      : kind == "microbatches" ? c.budget.microbatches
                                               : c.budget.epochs);
    compare_->setCurrentIndex(compare_->findData(
        QString::fromStdString(std::string(enumName(kBudgetCompares, c.budget.compare)))));
    budgetRule_->setCurrentIndex(budgetRule_->findData(
        QString::fromStdString(std::string(enumName(kBudgetRules, c.budget.rule)))));
    // The rule applies under equal simulated time only (compare = updates ignores it).
    budgetRule_->setEnabled(c.budget.compare == BudgetCompare::Time);
    seed_->setText(QString::number(c.seed));
    shuffle_->setChecked(c.shuffle);
    const QString backend = QString::fromStdString(std::string(enumName(kBackends, c.backend)));
    int device =
        c.device.empty() ? -1 : device_->findData(backend + ":" + QString::fromStdString(c.device));
    if (device < 0) device = device_->findData(backend);
    device_->setCurrentIndex(std::max(0, device));
    precision_->setCurrentIndex(precision_->findData(
        QString::fromStdString(std::string(enumName(kPrecisions, c.precision)))));
    errors_.clearAll();
    updating_ = false;
    methods_->syncFromConfig();
}

}  // namespace pipelens::ui
