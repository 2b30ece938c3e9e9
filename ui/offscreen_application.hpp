#pragma once
// The commands that draw with the app's charts (reproduce, run --figures, animate) need a
// QApplication; without a display Qt's offscreen platform draws the same pictures.
#include <QApplication>
#include <memory>

namespace pipelens::ui {

// A QApplication for this process if none exists yet (offscreen unless QT_QPA_PLATFORM says
// otherwise), or nullptr when one does; keep the pointer alive while drawing.
std::unique_ptr<QApplication> ensureOffscreenApplication();

// Drops the offscreen platform's notes on what it cannot do for a window nobody sees (size
// hints, XDG_RUNTIME_DIR): noise in a command's output. Call before the QApplication exists.
void quietOffscreenNotes();

}  // namespace pipelens::ui
