#pragma once
// The application's name and version (from the CMake project), for --version and About.
#include <QString>

namespace pipelens::ui {

QString applicationVersion();

}  // namespace pipelens::ui
