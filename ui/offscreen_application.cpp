#include "offscreen_application.hpp"

#include <cstdio>

namespace pipelens::ui {
namespace {

QtMessageHandler gPrevious = nullptr;

// The offscreen platform's notes on what it cannot do for a window nobody sees say nothing to a
// person reading a command's output: dropped; everything else goes on as before.
void dropOffscreenNotes(QtMsgType type, const QMessageLogContext& context, const QString& text) {
    if (text.contains(QLatin1String("does not support propagateSizeHints")) ||
        text.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set"))) {
        return;
    }
    if (gPrevious != nullptr) {
        gPrevious(type, context, text);
    } else {
        std::fprintf(stderr, "%s\n", qPrintable(qFormatLogMessage(type, context, text)));
    }
}

}  // namespace

void quietOffscreenNotes() {
    if (qEnvironmentVariable("QT_QPA_PLATFORM") != QLatin1String("offscreen")) return;
    gPrevious = qInstallMessageHandler(dropOffscreenNotes);
}

std::unique_ptr<QApplication> ensureOffscreenApplication() {
    if (QCoreApplication::instance() != nullptr) return nullptr;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    quietOffscreenNotes();
    static int argc = 1;
    static char name[] = "pipelens-cli";
    static char* argv[] = {name, nullptr};
    return std::make_unique<QApplication>(argc, argv);
}

}  // namespace pipelens::ui
