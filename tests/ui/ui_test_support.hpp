#pragma once
// Helpers shared by the workbench's Qt tests: isolated settings, waiting for a run.
#include <QCoreApplication>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "experiment_controller.hpp"

namespace pipelens::ui::test {

// Settings and caches go to a test location, never the person's own.
inline void isolateSettings() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("PipeLensTests");
    QCoreApplication::setApplicationName("pipelens-ui-tests");
}

// Waits until the controller has delivered the results of its current generation.
inline bool waitForCurrentResults(ExperimentController& c, int timeoutMs = 60000) {
    return QTest::qWaitFor(
        [&] {
            return !c.running() && c.latest() && c.latest()->generation == c.generation();
        },
        timeoutMs);
}

}  // namespace pipelens::ui::test
