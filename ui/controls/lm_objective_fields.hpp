#pragma once
// The language model's fields in the controls panel (objective kind char_transformer, shown only
// for it): width C, heads, context T, held-out fraction, init seed, the full objective, and the
// corpus (the built-in one, with its seed and length, or a UTF-8 file chosen in a dialog). Edits
// go to the ExperimentController like every other field; a refused value keeps its place and the
// message goes to the panel's message area (so nothing moves).
#include <QGroupBox>
#include <functional>

#include "controls/field_errors.hpp"
#include "experiment/config/config.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace pipelens::ui {

class ExperimentController;

class LmObjectiveFields : public QGroupBox {
    Q_OBJECT
  public:
    LmObjectiveFields(ExperimentController* controller, QLabel* messageArea,
                      QWidget* parent = nullptr);

    QSpinBox* widthField() const { return width_; }
    QSpinBox* headsField() const { return heads_; }
    QSpinBox* contextField() const { return context_; }
    QLineEdit* heldOutField() const { return heldOut_; }
    QSpinBox* initSeedField() const { return initSeed_; }
    QCheckBox* fullObjectiveField() const { return fullObjective_; }
    QComboBox* corpusField() const { return corpus_; }
    QSpinBox* corpusSeedField() const { return corpusSeed_; }
    QSpinBox* corpusCharactersField() const { return corpusCharacters_; }
    QLabel* corpusFileLabel() const { return corpusFile_; }
    const FieldErrors& errors() const { return errors_; }

    // The fields from the controller's config (a config without the language model leaves them
    // as they are); clears refusals.
    void syncFromConfig();
    // Asks for a UTF-8 text file and makes it the corpus; false when the dialog was cancelled.
    bool chooseCorpusFile();
    // The file as the corpus (absolute path), as choosing it in the dialog does.
    void setCorpusFile(const QString& path);

    // What switching the objective to the language model sets: a small model (C = 32, 4 heads,
    // T = 16, 20 000 built-in characters) unless the config has one, 600 slots, b = 4, every
    // method at γ = 0.5 (so it trains interactively), and nothing the model refuses (shuffle,
    // several seeds, gradient norms, SGD and fill-drain methods).
    static void switchToLanguageModel(ExperimentConfig& config);

  private:
    void apply(QWidget* field, const std::function<void(LanguageModelSpec&)>& change);

    ExperimentController* controller_ = nullptr;
    FieldErrors errors_;
    QSpinBox* width_ = nullptr;
    QSpinBox* heads_ = nullptr;
    QSpinBox* context_ = nullptr;
    QLineEdit* heldOut_ = nullptr;
    QSpinBox* initSeed_ = nullptr;
    QCheckBox* fullObjective_ = nullptr;
    QComboBox* corpus_ = nullptr;
    QSpinBox* corpusSeed_ = nullptr;
    QSpinBox* corpusCharacters_ = nullptr;
    QLabel* corpusFile_ = nullptr;
    QPushButton* browse_ = nullptr;
    bool updating_ = false;
};

}  // namespace pipelens::ui
