// The PipeLens desktop workbench. Options:
//   --preset NAME        start with a built-in experiment (default: "default")
//   --config FILE.json   start with an experiment file (the command-line tool's format)
//   --screenshot FILE    run to the end (a sweep preset: the whole sweep), save the window as
//                        PNG (or SVG) and exit
//   --scale F            scale factor of the screenshot (default 1)
//   --size WxH           window size of the screenshot (default 1500x950)
//   --slot N             the screenshot with the playback cursor at slot N (default: the end)
//   --view NAME          what the screenshot saves: window (default), gantt, heatmap or loss
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>
#include <cstdio>
#include <exception>

#include "app_info.hpp"
#include "charts/chart_support.hpp"
#include "cmdline/args.hpp"
#include "cmdline/environment.hpp"
#include "controllers/presets.hpp"
#include "controls/playback_bar.hpp"
#include "main_window.hpp"
#include "offscreen_application.hpp"

namespace {

int fail(const QString& message) {
    // Control bytes escaped, whoever built the message (a config path, a preset name).
    std::fprintf(stderr, "pipelens: %s\n",
                 pipelens::cmdline::withoutControlBytes(message.toStdString()).c_str());
    return 1;
}

// User input as quoted in a message, control bytes escaped (cmdline/args.hpp).
QString shown(const QString& text) {
    return QString::fromStdString(pipelens::cmdline::shownValue(text.toStdString()));
}

// pipelens-cli's rules as far as QCommandLineParser allows: each option at most once, a value
// never taken from the next option (write --config=-x for a file named -x), no positional
// arguments. Returns the reason, or an empty string.
QString strictnessError(const QCommandLineParser& parser, const QList<QCommandLineOption>& options,
                        const QStringList& arguments) {
    for (const QCommandLineOption& o : options) {
        const QString name = o.names().first();
        if (parser.values(o).size() > 1) return "--" + name + " is given twice; give it once";
        const int at = arguments.indexOf("--" + name);
        if (at >= 0 && at + 1 < arguments.size() && arguments[at + 1].startsWith('-') &&
            arguments[at + 1].size() > 1) {
            return "--" + name + " needs a value; got \"" + shown(arguments[at + 1]) +
                   "\" (write --" + name + "=VALUE for a value that begins with -)";
        }
    }
    if (!parser.positionalArguments().isEmpty()) {
        return "unexpected argument \"" + shown(parser.positionalArguments().first()) +
               "\": pipelens takes only options (--config FILE opens an experiment file)";
    }
    return {};
}

// Whether a display server is at hand (X11 or Wayland), or a Qt platform was chosen by hand.
bool displayAvailable() {
    return !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
           !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

// Without a display, what needs no window (--help, --version, a --screenshot) is drawn on Qt's
// offscreen platform instead of aborting with "could not connect to display"; an interactive
// start says what to do instead.
bool prepareHeadless(int argc, char** argv) {
    if (displayAvailable()) return true;
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version" ||
            a == "--screenshot" || a.startsWith("--screenshot=")) {
            qputenv("QT_QPA_PLATFORM", "offscreen");
            return true;
        }
    }
    std::fputs(
        "pipelens: no display (DISPLAY and WAYLAND_DISPLAY are unset), so no window can open.\n"
        "  pictures without a display: pipelens --screenshot FILE.png [--preset NAME]\n"
        "  a run with its figures:     pipelens-cli run --default --figures --out DIR\n"
        "  the window on a server:     xvfb-run -a pipelens\n",
        stderr);
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    if (!prepareHeadless(argc, argv)) return 1;
    pipelens::ui::quietOffscreenNotes();
    QApplication app(argc, argv);
    QApplication::setApplicationName("PipeLens");
    QApplication::setOrganizationName("PipeLens");
    QApplication::setApplicationVersion(pipelens::ui::applicationVersion());

    QCommandLineParser parser;
    parser.setApplicationDescription(
        "A workbench for pipeline-parallel training: PipeDream, Randomized PipeDream and "
        "LocalSGD on a slot-accurate simulator.\nPresets: " +
        pipelens::ui::presetIds().join(", "));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption preset("preset", "Start with the built-in experiment NAME.", "NAME");
    const QCommandLineOption config("config", "Start with the experiment in FILE (JSON).", "FILE");
    const QCommandLineOption screenshot(
        "screenshot",
        "Run to the end (a sweep preset: the whole sweep), save the window to FILE (.png or .svg) "
        "and exit.",
        "FILE");
    const QCommandLineOption scale("scale", "Scale factor of the screenshot (default 1).", "F",
                                   "1");
    const QCommandLineOption size("size", "Window size of the screenshot (default 1500x950).",
                                  "WxH", "1500x950");
    const QCommandLineOption slot(
        "slot", "With --screenshot: the playback cursor at slot N (slots run) before the shot.",
        "N");
    const QCommandLineOption view(
        "view",
        "With --screenshot: what is saved: window (default), gantt, compare (every pipeline "
        "method's timeline on one axis), heatmap or loss.",
        "NAME", "window");
    parser.addOptions({preset, config, screenshot, scale, size, slot, view});
    if (!parser.parse(QApplication::arguments())) return fail(shown(parser.errorText()));
    if (parser.isSet("help")) parser.showHelp(0);
    if (parser.isSet("version")) parser.showVersion();
    if (const QString why =
            strictnessError(parser, {preset, config, screenshot, scale, size, slot, view},
                            QApplication::arguments());
        !why.isEmpty()) {
        return fail(why);
    }
    try {
        pipelens::checkEnvironment();
    } catch (const std::exception& e) {
        return fail(QString::fromStdString(e.what()));
    }
    if (parser.isSet(preset) && !pipelens::ui::presetIds().contains(parser.value(preset))) {
        return fail("--preset = \"" + shown(parser.value(preset)) + "\" is not allowed: one of " +
                    pipelens::ui::presetIds().join(", "));
    }
    if (parser.isSet(preset) && parser.isSet(config)) {
        return fail("--preset and --config are exclusive: give one of them");
    }
    bool scaleOk = false;
    const double scaleFactor = parser.value(scale).toDouble(&scaleOk);
    if (!scaleOk || !(scaleFactor > 0.0) || scaleFactor > 8.0) {
        return fail("--scale = \"" + shown(parser.value(scale)) +
                    "\" is not allowed: a number in (0, 8]");
    }

    const QStringList sizeParts = parser.value(size).split('x');
    const int width = sizeParts.size() == 2 ? sizeParts[0].toInt() : 0;
    const int height = sizeParts.size() == 2 ? sizeParts[1].toInt() : 0;
    if (width < 200 || height < 200 || width > 10000 || height > 10000) {
        return fail("--size = \"" + shown(parser.value(size)) +
                    "\" is not allowed: WIDTHxHEIGHT in pixels, each from 200 to 10000");
    }

    const QStringList views = {"window", "gantt", "compare", "heatmap", "loss"};
    if (!views.contains(parser.value(view))) {
        return fail("--view = \"" + shown(parser.value(view)) + "\" is not allowed: one of " +
                    views.join(", "));
    }
    bool slotOk = true;
    const int slotValue = parser.value(slot).toInt(&slotOk);
    if (parser.isSet(slot) && (!slotOk || slotValue < 0)) {
        return fail("--slot = \"" + shown(parser.value(slot)) +
                    "\" is not allowed: a whole number of slots run, from 0 to the run's length");
    }
    for (const QCommandLineOption* o : {&slot, &view}) {
        if (parser.isSet(*o) && !parser.isSet(screenshot)) {
            return fail("--" + o->names().first() + " applies to --screenshot only");
        }
    }

    // Checked before the window exists and anything runs: the target (a FIFO or a device node
    // would be replaced by a regular file) and the image's size (--size times --scale).
    if (parser.isSet(screenshot)) {
        QString error;
        if (!pipelens::ui::chart::checkExportTarget(parser.value(screenshot), &error)) {
            return fail(error);
        }
        const bool svg = parser.value(screenshot).endsWith(".svg", Qt::CaseInsensitive);
        const QString problem =
            pipelens::ui::chart::imageSizeProblem(qRound64(width * (svg ? 1.0 : scaleFactor)),
                                                  qRound64(height * (svg ? 1.0 : scaleFactor)));
        if (!problem.isEmpty()) {
            return fail("--size " + shown(parser.value(size)) + " with --scale " +
                        shown(parser.value(scale)) + " is not allowed: " + problem);
        }
    }

    pipelens::ui::MainWindow window;
    QString error;
    if (parser.isSet(preset) && !window.loadPreset(parser.value(preset), &error)) {
        return fail(error);
    }
    if (parser.isSet(config) && !window.openConfig(parser.value(config), &error)) {
        return fail(error);
    }
    if (!parser.isSet(screenshot)) {
        window.show();
        return QApplication::exec();
    }
    // Screenshot mode: the window at the size asked for, results in, playback at the end.
    window.resize(width, height);
    window.show();
    if (!window.waitForResults(300'000, &error)) return fail(error);
    if (!window.waitForSweep(1'800'000, &error)) return fail(error);
    if (parser.isSet(slot)) {
        const int total = window.playback()->totalSlots();
        if (slotValue > total) {
            return fail("--slot = \"" + shown(parser.value(slot)) +
                        "\" is not allowed: a whole number from 0 to " + QString::number(total) +
                        " (the run's slots)");
        }
        window.playback()->setCursor(slotValue);
    }
    QApplication::processEvents();
    const QString file = parser.value(screenshot);
    const bool svg = file.endsWith(".svg", Qt::CaseInsensitive);
    if (!window.exportView(parser.value(view), svg ? "svg" : "png", file, scaleFactor, &error)) {
        return fail(error);
    }
    return 0;
}
