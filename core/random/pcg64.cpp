#include "random/pcg64.hpp"

#include <array>

namespace pipelens {
namespace {

// SeedSequence's hashing constants (NumPy's bit_generator, after Melissa O'Neill's seed_seq).
constexpr std::uint32_t kInitA = 0x43b0d7e5U;
constexpr std::uint32_t kMultA = 0x931e8875U;
constexpr std::uint32_t kInitB = 0x8b51f9ddU;
constexpr std::uint32_t kMultB = 0x58f38dedU;
constexpr std::uint32_t kMixMultL = 0xca01f9ddU;
constexpr std::uint32_t kMixMultR = 0x4973f715U;
constexpr int kXShift = 16;
constexpr std::size_t kPoolSize = 4;

std::uint32_t hashMix(std::uint32_t value, std::uint32_t& hashConst) {
    value ^= hashConst;
    hashConst *= kMultA;
    value *= hashConst;
    value ^= value >> kXShift;
    return value;
}

std::uint32_t mix(std::uint32_t x, std::uint32_t y) {
    std::uint32_t result = kMixMultL * x - kMixMultR * y;
    result ^= result >> kXShift;
    return result;
}

// The seed as NumPy coerces a Python int: its 32-bit words, lowest first; 0 is one zero word.
std::vector<std::uint32_t> seedWords(std::uint64_t seed) {
    std::vector<std::uint32_t> words{static_cast<std::uint32_t>(seed)};
    if (seed >> 32 != 0) {
        words.push_back(static_cast<std::uint32_t>(seed >> 32));
    }
    return words;
}

std::array<std::uint32_t, kPoolSize> mixEntropy(const std::vector<std::uint32_t>& entropy) {
    std::array<std::uint32_t, kPoolSize> pool{};
    std::uint32_t hashConst = kInitA;
    for (std::size_t i = 0; i < kPoolSize; ++i) {
        pool[i] = hashMix(i < entropy.size() ? entropy[i] : 0U, hashConst);
    }
    for (std::size_t src = 0; src < kPoolSize; ++src) {
        for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
            if (src != dst) {
                pool[dst] = mix(pool[dst], hashMix(pool[src], hashConst));
            }
        }
    }
    for (std::size_t src = kPoolSize; src < entropy.size(); ++src) {
        for (std::size_t dst = 0; dst < kPoolSize; ++dst) {
            pool[dst] = mix(pool[dst], hashMix(entropy[src], hashConst));
        }
    }
    return pool;
}

}  // namespace

std::vector<std::uint32_t> seedSequenceState(std::uint64_t seed, std::size_t count) {
    const std::array<std::uint32_t, kPoolSize> pool = mixEntropy(seedWords(seed));
    std::vector<std::uint32_t> state(count);
    std::uint32_t hashConst = kInitB;
    for (std::size_t i = 0; i < count; ++i) {
        std::uint32_t value = pool[i % kPoolSize];
        value ^= hashConst;
        hashConst *= kMultB;
        value *= hashConst;
        value ^= value >> kXShift;
        state[i] = value;
    }
    return state;
}

Pcg64::Pcg64(std::uint64_t seed) {
    // generate_state(4, np.uint64) is eight 32-bit words read as four little-endian 64-bit ones.
    const std::vector<std::uint32_t> w = seedSequenceState(seed, 8);
    std::array<std::uint64_t, 4> s{};
    for (std::size_t i = 0; i < s.size(); ++i) {
        s[i] = static_cast<std::uint64_t>(w[2 * i]) | static_cast<std::uint64_t>(w[2 * i + 1])
                                                          << 32;
    }
    const Word initState = static_cast<Word>(s[0]) << 64 | s[1];
    const Word initSequence = static_cast<Word>(s[2]) << 64 | s[3];
    // PCG's srandom: the increment must be odd; the state is mixed in between two steps.
    increment_ = initSequence << 1 | 1U;
    state_ = 0;
    step();
    state_ += initState;
    step();
}

std::uint32_t Pcg64::nextU32() {
    if (hasHalf_) {
        hasHalf_ = false;
        return half_;
    }
    const std::uint64_t next = nextU64();
    hasHalf_ = true;
    half_ = static_cast<std::uint32_t>(next >> 32);
    return static_cast<std::uint32_t>(next);
}

}  // namespace pipelens
