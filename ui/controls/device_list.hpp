#pragma once
// The OpenCL devices the controls offer, when this build has the OpenCL backend.
#include <QList>
#include <QString>

namespace pipelens::ui {

struct DeviceEntry {
    QString index;  // what the config's "device" takes
    QString text;   // "PoCL: cpu-haswell (OpenCL 3.0, fp64)"
};

// Empty when the build has no OpenCL backend or no device is installed.
QList<DeviceEntry> openClDevices();
bool haveOpenClBackend();

}  // namespace pipelens::ui
