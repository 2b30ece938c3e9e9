#pragma once
// Shared by the input-hardening tests: an expected typed error with every fragment in its
// message, and the temporaries a results write may leave beside its folder.
#include <QtTest>

#include <filesystem>
#include <functional>
#include <string>

// Expects `f` to throw E with every fragment in its message.
template <typename E>
void expectError(const std::function<void()>& f, const QStringList& fragments) {
    try {
        f();
    } catch (const E& e) {
        const QString msg = QString::fromStdString(e.what());
        for (const QString& part : fragments) {
            QVERIFY2(msg.contains(part), qPrintable("\"" + part + "\" missing from: " + msg));
        }
        return;
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QString("wrong exception type: ") + e.what()));
    }
    QFAIL(qPrintable("no error; expected one mentioning " + fragments.join(", ")));
}

// The message of the E that `f` throws ("" when it throws none), for tests that compare it whole.
template <typename E>
std::string errorMessageOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return {};
}

// Entries of `dir` named like a results temporary (".tmp-PID", ".old-PID").
inline int resultsTemporaries(const std::filesystem::path& dir) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        n += name.find(".tmp-") != std::string::npos || name.find(".old-") != std::string::npos;
    }
    return n;
}
