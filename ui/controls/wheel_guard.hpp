#pragma once
// Rolling the mouse wheel over a panel scrolls the panel; it never changes a spin box, combo box
// or slider that the pointer happens to pass over. A field takes the wheel only when it has the
// keyboard focus (a click or Tab gave it): one application-wide event filter, so that fields
// made later (a method's row) are guarded too.
#include <QObject>

class QWidget;

namespace pipelens::ui {

class WheelGuard : public QObject {
    Q_OBJECT
  public:
    explicit WheelGuard(QObject* parent = nullptr);
    // The spin box, combo box or slider (not a scroll bar) that `object` is or belongs to (a
    // spin box's line edit); nullptr for anything else.
    static QWidget* guardedField(QObject* object);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace pipelens::ui
