#pragma once
// A combo box sized to its contents up to a cap: a longer current text (a method named with its
// optimizer and correctors, "PipeDream + prediction (PipeOptim s)") is drawn elided, ending in
// "…", with the whole text as its tooltip, so that one long name does not widen the window past
// a small screen. The list that drops down shows every name whole.
#include <QComboBox>

namespace pipelens::ui {

class ElidingComboBox : public QComboBox {
    Q_OBJECT
  public:
    // `maxChars`: the cap, in average character widths.
    explicit ElidingComboBox(int maxChars, QWidget* parent = nullptr);

    // The tooltip; the whole current text is added below it while it is elided.
    void setBaseToolTip(const QString& text);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    // Whether the current text is drawn elided at the box's width.
    bool elided() const;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

  private:
    int cap() const;
    QString shownText() const;
    void updateToolTip();

    int maxChars_;
    QString baseToolTip_;
};

}  // namespace pipelens::ui
