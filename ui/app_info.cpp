#include "app_info.hpp"

namespace pipelens::ui {

QString applicationVersion() {
    return QStringLiteral(PIPELENS_VERSION);
}

}  // namespace pipelens::ui
