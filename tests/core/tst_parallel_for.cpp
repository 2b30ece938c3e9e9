// parallelFor: every index exactly once, on at most the threads asked for, and the first
// exception stops new work and reaches the caller. WorkerThreads: the app's background jobs,
// each with its own cancel flag, joined when finished or when the owner goes.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "util/parallel_for.hpp"
#include "util/worker_threads.hpp"

using namespace pipelens;

class TestParallelFor : public QObject {
    Q_OBJECT
  private slots:
    void visitsEveryIndexOnce() {
        for (int threads : {0, 1, 3, 64}) {
            std::vector<std::atomic<int>> seen(1000);
            parallelFor(seen.size(), threads, [&](size_t i) { seen[i]++; });
            for (const auto& s : seen) QCOMPARE(s.load(), 1);
        }
        parallelFor(0, 4, [](size_t) { QFAIL("no index to visit"); });
    }

    void usesAtMostTheThreadsAskedFor() {
        std::mutex mutex;
        std::set<std::thread::id> ids;
        std::atomic<int> running{0};
        std::atomic<int> peak{0};
        parallelFor(40, 3, [&](size_t) {
            const int now = ++running;
            int seen = peak.load();
            while (now > seen && !peak.compare_exchange_weak(seen, now)) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            --running;
            std::lock_guard<std::mutex> lock(mutex);
            ids.insert(std::this_thread::get_id());
        });
        QVERIFY(peak.load() <= 3);
        QVERIFY(ids.size() <= 3);
        // One thread: everything on the caller's thread, in order.
        std::vector<size_t> order;
        const std::thread::id caller = std::this_thread::get_id();
        bool elsewhere = false;
        parallelFor(5, 1, [&](size_t i) {
            elsewhere = elsewhere || std::this_thread::get_id() != caller;
            order.push_back(i);
        });
        QVERIFY(!elsewhere);
        QCOMPARE(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
    }

    void firstExceptionStopsAndIsRethrown() {
        std::atomic<int> started{0};
        bool caught = false;
        try {
            parallelFor(1000, 1, [&](size_t i) {
                ++started;
                if (i == 3) throw std::runtime_error("job 3 failed");
            });
        } catch (const std::runtime_error& e) {
            caught = std::string(e.what()) == "job 3 failed";
        }
        QVERIFY(caught);
        QCOMPARE(started.load(), 4);  // no index after the failing one started
        // With several threads, the others finish what they hold and nothing hangs.
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, parallelFor(1000, 4, [](size_t i) {
                                     if (i == 10) throw std::runtime_error("job 10 failed");
                                 }));
    }

    // A job runs until its own flag turns; cancelAll turns every flag, and reapFinished joins
    // only the jobs that have returned.
    void workerThreadsCancelAndReap() {
        WorkerThreads workers;
        std::atomic<int> returned{0};
        std::atomic<bool> release{false};
        auto loopUntilCancelled = [&](const CancelFlag& cancel) {
            while (!cancel->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            returned++;
        };
        workers.start(loopUntilCancelled);
        workers.start(loopUntilCancelled);
        // A third job ignores its flag until released: cancelAll must not wait for it.
        workers.start([&](const CancelFlag&) {
            while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            returned++;
        });
        QCOMPARE(workers.inFlight(), 3);
        workers.cancelAll();
        QVERIFY(QTest::qWaitFor([&] { return returned.load() == 2; }, 10000));
        workers.reapFinished();
        QCOMPARE(workers.inFlight(), 1);  // the released-later job is still running
        release = true;
        QVERIFY(QTest::qWaitFor([&] { return workers.inFlight() == 0; }, 10000));
        workers.reapFinished();
        QCOMPARE(returned.load(), 3);
    }

    // stopAll (and the destructor) cancel and wait: nothing runs after it returns.
    void workerThreadsStopAllWaits() {
        std::atomic<int> running{0};
        {
            WorkerThreads workers;
            for (int i = 0; i < 4; ++i) {
                workers.start([&](const CancelFlag& cancel) {
                    running++;
                    while (!cancel->load())
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                    running--;
                });
            }
            QVERIFY(QTest::qWaitFor([&] { return running.load() == 4; }, 10000));
            workers.stopAll();
            QCOMPARE(running.load(), 0);
            QCOMPARE(workers.inFlight(), 0);
            workers.start([&](const CancelFlag& cancel) {
                running++;
                while (!cancel->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                running--;
            });
        }  // the destructor stops the last one
        QCOMPARE(running.load(), 0);
    }
};

QTEST_APPLESS_MAIN(TestParallelFor)
#include "tst_parallel_for.moc"
