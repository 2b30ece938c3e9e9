#pragma once
// A scroll area that scrolls along one axis only and, along the other, is never smaller than
// its content's minimum: the controls panel scrolls up and down but is always wide enough for
// its widest row (which changes as the selected method shows other fields), the figure strip
// scrolls sideways in a narrow window but keeps the height its figures need.
#include <QScrollArea>

namespace pipelens::ui {

class FittingScrollArea : public QScrollArea {
    Q_OBJECT
  public:
    FittingScrollArea(QWidget* content, Qt::Orientation scrolls, QWidget* parent = nullptr);

    // Scroll along the other axis from now on (a strip moved from a row into a tab).
    void setScrolls(Qt::Orientation scrolls);
    Qt::Orientation scrolls() const { return scrolls_; }

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    Qt::Orientation scrolls_;
};

}  // namespace pipelens::ui
