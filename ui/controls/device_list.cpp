#include "controls/device_list.hpp"

#ifdef PIPELENS_HAVE_OPENCL
#include "devices.hpp"
#endif

namespace pipelens::ui {

bool haveOpenClBackend() {
#ifdef PIPELENS_HAVE_OPENCL
    return true;
#else
    return false;
#endif
}

QList<DeviceEntry> openClDevices() {
    QList<DeviceEntry> out;
#ifdef PIPELENS_HAVE_OPENCL
    try {
        gpu::ensureKernelCacheDir();
        for (const gpu::DeviceInfo& d : gpu::listDevices()) {
            out.push_back(
                {QString::number(d.index),
                 QStringLiteral("%1: %2 (%3%4)")
                     .arg(QString::fromStdString(d.platform), QString::fromStdString(d.name),
                          QString::fromStdString(d.version),
                          d.fp64 ? QStringLiteral(", fp64") : QString())});
        }
    } catch (const std::exception&) {
        // No usable platform: the combo offers the CPU engine only.
    }
#endif
    return out;
}

}  // namespace pipelens::ui
