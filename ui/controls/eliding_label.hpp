#pragma once
// A one-line label that shows as much of its text as fits, ending in "…", and always carries the
// whole text as its tooltip: for the status bar's warnings and notices, which can be longer than
// a narrow window is wide.
#include <QLabel>

namespace pipelens::ui {

class ElidingLabel : public QLabel {
    Q_OBJECT
  public:
    explicit ElidingLabel(QWidget* parent = nullptr);

    void setFullText(const QString& text);
    QString fullText() const { return fullText_; }

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    void elide();

    QString fullText_;
};

}  // namespace pipelens::ui
