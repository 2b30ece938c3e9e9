#pragma once
// File → Export animation…: a small dialog (the file, whose name picks the format: .gif, .mp4 or
// a folder ending in /; the slots; frames per second; size; panels) over the window's current
// results, then the export (exportAnimation, the CLI's own) behind a cancelable progress dialog.
#include <QDialog>
#include <QString>
#include <optional>

#include "animation/animation_options.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace pipelens::ui {

class MainWindow;

class AnimationDialog : public QDialog {
    Q_OBJECT
  public:
    // `totalSlots`: the length of the run of the method the Gantt chart shows.
    AnimationDialog(int totalSlots, QWidget* parent = nullptr);

    QLineEdit* pathField() const { return path_; }
    QSpinBox* fromField() const { return from_; }
    QSpinBox* toField() const { return to_; }
    QSpinBox* fpsField() const { return fps_; }
    QSpinBox* widthField() const { return width_; }
    QSpinBox* heightField() const { return height_; }
    QComboBox* panelsField() const { return panels_; }
    QLabel* errorLabel() const { return error_; }

    // The fields as export options; nullopt (and the reason shown in the dialog) when one is
    // refused, e.g. an unknown extension or an odd size for MP4.
    std::optional<AnimationOptions> options();

  public slots:
    void accept() override;  // only with valid options

  private:
    void browse(bool folder);
    void remember() const;

    QLineEdit* path_;
    QSpinBox* from_;
    QSpinBox* to_;
    QSpinBox* fps_;
    QSpinBox* width_;
    QSpinBox* height_;
    QComboBox* panels_;
    QLabel* error_;
};

// The dialog, then the export with progress. Returns the status line for the window (and
// whether it reports a failure); an empty message when the person closed the dialog.
struct AnimationExportOutcome {
    QString message;
    bool error = false;
};
AnimationExportOutcome exportAnimationInteractively(MainWindow* window);

}  // namespace pipelens::ui
