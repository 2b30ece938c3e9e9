#pragma once
// `pipelens-cli reproduce E1|E2|E3|E4|all --out DIR [--quick]` (docs/reproduction.md).
#include <ostream>

namespace pipelens::ui {

int runReproduceCommand(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace pipelens::ui
