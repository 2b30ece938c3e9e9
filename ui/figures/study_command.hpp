#pragma once
// `pipelens-cli study staleness --out DIR [--quick] [--seeds N] [--threads N] [--quiet]`
// (docs/correctors.md, "Study"; docs/cli.md).
#include <ostream>

namespace pipelens::ui {

int runStudyCommand(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace pipelens::ui
