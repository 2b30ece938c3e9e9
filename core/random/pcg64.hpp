#pragma once
// NumPy's default bit generator: PCG64 (XSL-RR 128/64) seeded through SeedSequence, so that
// Pcg64(seed) gives the stream of np.random.default_rng(seed) (SPEC section 6).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipelens {

// SeedSequence(seed).generate_state(count, np.uint32) for a non-negative integer seed (no spawn
// key, pool of four words). The seed enters as its 32-bit words, lowest first.
std::vector<std::uint32_t> seedSequenceState(std::uint64_t seed, std::size_t count);

class Pcg64 {
  public:
    explicit Pcg64(std::uint64_t seed);

    // One step of the LCG, then the XSL-RR output of the new state. Inline: the normal draws
    // call it once per element (a call per draw was a visible share of the data set's cost).
    std::uint64_t nextU64() {
        step();
        const auto high = static_cast<std::uint64_t>(state_ >> 64);
        const auto low = static_cast<std::uint64_t>(state_);
        const auto rotation = static_cast<unsigned>(state_ >> 122);
        return std::rotr(high ^ low, static_cast<int>(rotation));
    }
    // Half of a 64-bit output, low half first; the high half waits for the next call, as in
    // NumPy's bit generator (nextU64 and nextDouble neither use nor clear it).
    std::uint32_t nextU32();
    // Generator.random(): the top 53 bits over 2^53, in [0, 1).
    double nextDouble() { return static_cast<double>(nextU64() >> 11) * 0x1.0p-53; }

  private:
    __extension__ using Word = unsigned __int128;
    // PCG's default 128-bit LCG multiplier.
    static constexpr std::uint64_t kMultiplierHigh = 2549297995355413924ULL;
    static constexpr std::uint64_t kMultiplierLow = 4865540595714422341ULL;
    void step() {
        state_ = state_ * (static_cast<Word>(kMultiplierHigh) << 64 | kMultiplierLow) + increment_;
    }

    Word state_ = 0;
    Word increment_ = 0;
    bool hasHalf_ = false;
    std::uint32_t half_ = 0;
};

}  // namespace pipelens
