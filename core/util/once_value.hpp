#pragma once
// A value computed at most once, by whichever thread asks for it first; a thread that asks while
// another computes it waits for that result instead of computing it twice. ready() never waits.
// If the computation throws, nothing is stored and the next caller tries again.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace pipelens {

template <class T>
class OnceValue {
  public:
    OnceValue() : state_(std::make_unique<State>()) {}
    // A copy takes the value if it is there (never a computation in progress).
    OnceValue(const OnceValue& other) : OnceValue() {
        if (other.ready()) set(*other.state_->value);
    }
    OnceValue& operator=(const OnceValue& other) {
        if (this != &other) {
            state_ = std::make_unique<State>();
            if (other.ready()) set(*other.state_->value);
        }
        return *this;
    }
    OnceValue(OnceValue&&) noexcept = default;
    OnceValue& operator=(OnceValue&&) noexcept = default;

    bool ready() const { return state_->ready.load(std::memory_order_acquire); }

    // The value; computes it with `compute` unless it is there or being computed elsewhere.
    template <class F>
    const T& get(F&& compute) const {
        State& s = *state_;
        if (ready()) return *s.value;
        std::unique_lock<std::mutex> lock(s.mutex);
        s.changed.wait(lock, [&] { return !s.computing; });
        if (s.value) return *s.value;
        s.computing = true;
        lock.unlock();
        try {
            T v = compute();
            lock.lock();
            s.value = std::move(v);
        } catch (...) {
            lock.lock();
            s.computing = false;
            s.changed.notify_all();
            throw;
        }
        s.computing = false;
        s.ready.store(true, std::memory_order_release);
        s.changed.notify_all();
        return *s.value;
    }

    // A known value (before the owner is shared between threads): replaces any earlier one.
    void set(T v) {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->value = std::move(v);
        state_->ready.store(true, std::memory_order_release);
    }

  private:
    struct State {
        std::mutex mutex;
        std::condition_variable changed;
        std::optional<T> value;
        bool computing = false;
        std::atomic<bool> ready{false};
    };
    // Behind a pointer: the mutex and condition variable must not move with the owner.
    std::unique_ptr<State> state_;
};

}  // namespace pipelens
