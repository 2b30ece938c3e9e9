#include "controls/lm_objective_fields.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <algorithm>
#include <cmath>

#include "controllers/experiment_controller.hpp"
#include "experiment/config/lm_config.hpp"
#include "util/format_number.hpp"

namespace pipelens::ui {
namespace {

int clampedInt(std::uint64_t v) {
    return static_cast<int>(std::min<std::uint64_t>(v, 2'000'000'000));
}

}  // namespace

LmObjectiveFields::LmObjectiveFields(ExperimentController* controller, QLabel* messageArea,
                                     QWidget* parent)
    : QGroupBox(tr("Language model"), parent), controller_(controller) {
    setObjectName("languageModelFields");
    auto* form = new QFormLayout(this);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    errors_.setMessageArea(messageArea);
    width_ = spin(limits::kWidth);
    errors_.addRow(form, tr("Width C"), width_,
                   tr("Embedding width of the transformer (the heads split it)"));
    heads_ = spin(limits::kHeads);
    errors_.addRow(form, tr("Heads"), heads_, tr("Attention heads; must divide the width C"));
    context_ = spin(limits::kContext);
    errors_.addRow(form, tr("Context T"), context_,
                   tr("Characters per sequence: each batch is b rows of T characters"));
    corpus_ = new QComboBox;
    corpus_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    corpus_->setMinimumContentsLength(12);
    corpus_->addItem(tr("Built-in (generated play text)"), "builtin");
    corpus_->addItem(tr("UTF-8 text file…"), "file");
    errors_.addRow(form, tr("Corpus"), corpus_,
                   tr("The text to learn: PipeLens's own generated play-like text (45 "
                      "characters), or any UTF-8 text file"));
    corpusSeed_ = spin(limits::kSeed);
    errors_.addRow(form, tr("Corpus seed"), corpusSeed_, tr("Seed of the built-in text"));
    corpusCharacters_ = spin(limits::kCorpusCharacters);
    corpusCharacters_->setSingleStep(1000);
    errors_.addRow(form, tr("Characters"), corpusCharacters_,
                   tr("Length of the built-in text (1000 to 100000000)"));
    QWidget* fileRow = fileChooserRow(tr("(built-in)"), &corpusFile_, &browse_);
    errors_.addRow(form, tr("Corpus file"), fileRow,
                   tr("A UTF-8 text file; its characters are the vocabulary"));
    heldOut_ = new QLineEdit;
    errors_.addRow(form, tr("Held-out fraction"), heldOut_,
                   tr("The corpus's last part, kept out of training (0 to 0.9); Enter applies"));
    initSeed_ = spin(limits::kSeed);
    errors_.addRow(form, tr("Init seed"), initSeed_, tr("Seed of the initial weights"));
    fullObjective_ = new QCheckBox(tr("Full objective (all batches, slower)"));
    errors_.addRow(form, QString(), fullObjective_,
                   tr("Also computes the mean loss over every batch after each slot (RPD: each "
                      "update); the curves stay the last-stage forward loss"));

    connect(width_, &QSpinBox::valueChanged, this,
            [this](int v) { apply(width_, [v](LanguageModelSpec& m) { m.width = v; }); });
    connect(heads_, &QSpinBox::valueChanged, this,
            [this](int v) { apply(heads_, [v](LanguageModelSpec& m) { m.heads = v; }); });
    connect(context_, &QSpinBox::valueChanged, this,
            [this](int v) { apply(context_, [v](LanguageModelSpec& m) { m.context = v; }); });
    connect(corpus_, &QComboBox::currentIndexChanged, this, [this] {
        if (updating_) return;
        if (corpus_->currentData().toString() == "file") {
            if (!chooseCorpusFile()) syncFromConfig();
            return;
        }
        apply(corpus_, [](LanguageModelSpec& m) { m.corpus.clear(); });
    });
    connect(browse_, &QPushButton::clicked, this, [this] { chooseCorpusFile(); });
    connect(corpusSeed_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(corpusSeed_,
              [v](LanguageModelSpec& m) { m.corpusSeed = static_cast<std::uint64_t>(v); });
    });
    connect(corpusCharacters_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(corpusCharacters_, [v](LanguageModelSpec& m) { m.corpusCharacters = v; });
    });
    connect(heldOut_, &QLineEdit::editingFinished, this, [this] {
        bool ok = false;
        const double v = heldOut_->text().trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(v)) {
            errors_.show(heldOut_, tr("Held-out fraction = \"%1\" is not allowed: a number in "
                                      "[0, 0.9]")
                                       .arg(heldOut_->text()));
            return;
        }
        apply(heldOut_, [v](LanguageModelSpec& m) {
            m.heldOutFraction = v;
            if (v == 0.0) m.heldOutEvery = 0;  // nothing left to evaluate
        });
    });
    connect(initSeed_, &QSpinBox::valueChanged, this, [this](int v) {
        apply(initSeed_, [v](LanguageModelSpec& m) { m.initSeed = static_cast<std::uint64_t>(v); });
    });
    connect(fullObjective_, &QCheckBox::toggled, this, [this](bool on) {
        apply(fullObjective_, [on](LanguageModelSpec& m) { m.fullObjective = on; });
    });
}

void LmObjectiveFields::apply(QWidget* field,
                              const std::function<void(LanguageModelSpec&)>& change) {
    if (updating_) return;
    const QString error = controller_->tryModify([&](ExperimentConfig& c) {
        if (c.objective.languageModel) change(*c.objective.languageModel);
    });
    errors_.show(field, error);
}

bool LmObjectiveFields::chooseCorpusFile() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a UTF-8 text corpus"), QString(),
                                     tr("Text (*.txt *.md *.text);;All files (*)"));
    if (path.isEmpty()) return false;
    setCorpusFile(path);
    return true;
}

void LmObjectiveFields::setCorpusFile(const QString& path) {
    const std::string file = QFileInfo(path).absoluteFilePath().toStdString();
    apply(corpus_, [file](LanguageModelSpec& m) { m.corpus = file; });
    syncFromConfig();
}

void LmObjectiveFields::syncFromConfig() {
    const ExperimentConfig& c = controller_->config();
    if (!c.objective.languageModel) return;
    const LanguageModelSpec& m = *c.objective.languageModel;
    updating_ = true;
    const QSignalBlocker b1(width_), b2(heads_), b3(context_), b4(corpus_), b5(corpusSeed_),
        b6(corpusCharacters_), b7(initSeed_), b8(fullObjective_);
    width_->setValue(m.width);
    heads_->setValue(m.heads);
    context_->setValue(m.context);
    const bool builtIn = m.corpus.empty();
    corpus_->setCurrentIndex(builtIn ? 0 : 1);
    corpusSeed_->setValue(clampedInt(m.corpusSeed));
    corpusCharacters_->setValue(
        static_cast<int>(std::min<long long>(m.corpusCharacters, corpusCharacters_->maximum())));
    corpusSeed_->setEnabled(builtIn);
    corpusCharacters_->setEnabled(builtIn);
    corpusFile_->setText(builtIn ? tr("(built-in)")
                                 : QFileInfo(QString::fromStdString(m.corpus)).fileName());
    corpusFile_->setToolTip(QString::fromStdString(m.corpus));
    heldOut_->setText(QString::fromStdString(formatNumber(m.heldOutFraction)));
    initSeed_->setValue(clampedInt(m.initSeed));
    fullObjective_->setChecked(m.fullObjective);
    errors_.clearAll();
    updating_ = false;
}

void LmObjectiveFields::switchToLanguageModel(ExperimentConfig& c) {
    if (!c.objective.languageModel) {
        LanguageModelSpec m;
        m.width = 32;
        m.heads = 4;
        m.context = 16;
        m.corpusCharacters = 20'000;
        m.corpusSeed = c.seed;
        m.initSeed = c.seed;
        m.sampleLines = 3;
        m.sampleLength = 80;
        c.objective.languageModel = m;
    }
    // A linear experiment's run length and γ grids would take minutes on the model: start from
    // the e5 preset's 600 slots, b = 4 and γ = 0.5 (a linear γ means nothing here).
    c.budget.totalSlots = 600;
    c.budget.microbatches = 0;
    c.budget.epochs = 0.0;
    c.batchSize = 4;
    for (MethodSpec& m : c.methods) {
        m.step = StepSpec{};
        m.step.value = 0.5;
    }
    c.shuffle = false;
    c.seeds = 1;
    c.sampling.gradNormEvery = 0;
    c.sampling.objectivePerUpdate = true;
    c.sampling.blowUpFactor = 100.0;   // × log V: the language model's default
    c.stages = std::max(c.stages, 3);  // an embedding stage, a block, the head
    std::erase_if(c.methods, [](const MethodSpec& s) {
        return s.method == Method::Sgd || s.method == Method::FillDrain;
    });
    if (c.methods.empty()) c.methods.push_back(MethodSpec{});
}

}  // namespace pipelens::ui
