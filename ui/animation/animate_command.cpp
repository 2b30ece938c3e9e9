#include "animation/animate_command.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "animation/animation_export.hpp"
#include "animation/animation_options.hpp"
#include "backend_select.hpp"
#include "cmdline/args.hpp"
#include "cmdline/experiment_arg.hpp"
#include "errors.hpp"
#include "experiment/config/config.hpp"
#include "experiment/output/results.hpp"
#include "experiment/run/experiment.hpp"
#include "main_window.hpp"
#include "offscreen_application.hpp"

namespace pipelens::ui {
namespace {

const char* kHelp =
    R"(Usage: pipelens-cli animate CONFIG.json --out FILE.gif|FILE.mp4|DIR/ [options]
       pipelens-cli animate --default --out FILE.gif|FILE.mp4|DIR/ [options]

Runs the experiment and writes the playback of one method's pipeline Gantt chart as an
animation, one frame per slot, drawn with the desktop app's charts (UI builds only): an animated
GIF, an H.264 MP4, or a folder of numbered PNG frames (frame_00000.png, ...) for a path ending
in /. Frame k shows slot A + k run (the playback cursor just after it). The output is written
under a temporary name and renamed into place: a failure leaves an earlier file as it was; a
folder is replaced only when it is empty or an earlier animate wrote it.

Options:
  --out PATH       FILE.gif, FILE.mp4 or DIR/ (required)
  --default        the default experiment instead of a config file
  --method NAME    the method's label (default: the first method with a pipeline timeline)
  --slots A:B      the slots [A, B) of that method's run (default: all of them)
  --fps N          frames per second, 1 to 60 (default 10)
  --size WxH       frame size in pixels (default 960x540; even for .mp4)
  --panels P       gantt (default), gantt+loss (the loss curves below), or all (the loss
                   curves and the staleness heatmap side by side below)
  --budget-rule R  override the config's budget.rule: fit, truncate or reach (a reach run
                   lasts at least the slot budget, whole; docs/config.md)
  --threads N      worker threads of the run (default: one per core)
  --quiet          print nothing but errors
)";

struct Options {
    AnimationOptions animation;
    ExperimentConfig config;
    int threads = 0;
    bool quiet = false;
};

// Every value is checked before the run, so a typo never costs one.
Options parse(int argc, char** argv) {
    const cmdline::ParsedArgs a =
        cmdline::parseArgs(cmdline::commandSpec("animate"), argc, argv, 2);
    if (!a.has("out")) throw ConfigError("--out is missing: FILE.gif, FILE.mp4 or DIR/");
    Options o;
    AnimationOptions& anim = o.animation;
    anim.out = a.get("out");
    anim.format = animationFormat(anim.out, "--out");
    if (a.has("slots")) anim.slotRange = parseSlotRange(a.get("slots"), "--slots");
    if (a.has("fps")) anim.fps = parseFps(a.get("fps"), "--fps");
    if (a.has("size")) {
        const auto [w, h] = parseFrameSize(a.get("size"), anim.format, "--size");
        anim.width = w;
        anim.height = h;
    }
    if (a.has("panels")) anim.panels = parsePanels(a.get("panels"), "--panels");
    anim.method = a.get("method");
    if (a.has("method") && anim.method.empty()) {
        throw ConfigError("--method = \"\" is not allowed: a method's label");
    }
    o.threads = a.integer("threads", 0, 0, 256);
    o.quiet = a.has("quiet");
    o.config = cmdline::experimentOf(a, "animate");
    prepareAnimationTarget(anim, "--out");
    return o;
}

}  // namespace

int runAnimateCommand(int argc, char** argv, std::ostream& out, std::ostream& err) {
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") break;
        if (a == "--help" || a == "-h") return out << kHelp, 0;
    }
    Options o = parse(argc, argv);
    RunOptions run;
    run.threads = o.threads;
    const auto start = std::chrono::steady_clock::now();
    ExperimentResult result = runOnChosenEngine(o.config, run);
    const std::vector<std::string> notices = result.notices;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const auto app = ensureOffscreenApplication();
    MainWindow window;
    QString error;
    if (!window.showFinishedRun(std::move(result), seconds, &error)) {
        throw ConfigError(error.toStdString());
    }
    AnimationSource source = animationSource(window);
    // The first method with a timeline unless --method names one (not a saved view's choice).
    source.defaultMethod = -1;
    AnimationWritten written;
    const auto drawStart = std::chrono::steady_clock::now();
    const auto write = [&](const std::atomic<bool>* stop) {
        written = exportAnimation(source, o.animation, AnimationFields{}, {}, stop);
        return written.warnings;
    };
    for (const std::string& w : writeStoppable(write)) {
        err << "pipelens-cli: warning: " << w << '\n';
    }
    const double drawSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - drawStart).count();
    if (!o.quiet) {
        // With the result, as run's: a command that fails prints its one-line reason alone.
        for (const std::string& n : notices) err << "notice: " << n << '\n';
        const AnimationOptions& a = o.animation;
        out << "animation written to " << written.path << ": " << written.frames
            << " frames (slots " << written.slotRange.first << ":" << written.slotRange.second
            << " of " << written.totalSlots << ", "
            << source.snapshot->runs()[static_cast<size_t>(written.method)].label << "), "
            << a.width << "x" << a.height << ", " << a.fps << " fps, " << formatName(a.format)
            << "; the run took " << seconds << " s, the frames " << drawSeconds << " s\n";
    }
    return 0;
}

}  // namespace pipelens::ui
