#pragma once
// `pipelens-cli animate CONFIG.json --out FILE.gif|FILE.mp4|DIR/ [options]` (docs/cli.md): runs
// the experiment and writes its Gantt playback as an animation, drawn with the app's charts on
// Qt's offscreen platform (in pipelens-reproduce, which pipelens-cli execs for it).
#include <ostream>

namespace pipelens::ui {

int runAnimateCommand(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace pipelens::ui
