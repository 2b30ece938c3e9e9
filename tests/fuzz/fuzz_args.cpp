// libFuzzer target: the command-line parser (cmdline/args.cpp). The input is split at NUL bytes
// into arguments, which go through every command's table, then through the typed accessors the
// commands use; nothing runs. Only ConfigError may escape: anything else aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cmdline/args.hpp"
#include "errors.hpp"

namespace {

// fuzz_support.hpp's rule for a parser that throws only ConfigError (that header needs the engine).
template <typename F>
void expectConfigErrorsOnly(F&& parse) {
    try {
        parse();
    } catch (const pipelens::ConfigError&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "untyped exception: %s\n", e.what());
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args;
    std::string current;
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            args.push_back(current);
            current.clear();
        } else {
            current += static_cast<char>(data[i]);
        }
    }
    if (size > 0) args.push_back(current);
    // The last guard before a terminal leaves no control byte in any message.
    for (const std::string& a : args) {
        const std::string clean = pipelens::cmdline::withoutControlBytes(a);
        for (std::size_t i = 0; i < clean.size(); ++i) {
            const auto c = static_cast<unsigned char>(clean[i]);
            const bool c1 = c == 0xc2 && i + 1 < clean.size() &&
                            static_cast<unsigned char>(clean[i + 1]) < 0xa0 &&
                            static_cast<unsigned char>(clean[i + 1]) >= 0x80;
            if (c < 0x20 || c == 0x7f || c1) std::abort();
        }
    }
    for (const pipelens::cmdline::CommandSpec& spec : pipelens::cmdline::commandSpecs()) {
        expectConfigErrorsOnly([&] {
            const pipelens::cmdline::ParsedArgs parsed = pipelens::cmdline::parseArgs(spec, args);
            if (parsed.positional().size() > static_cast<std::size_t>(spec.maxPositionals)) {
                std::abort();
            }
            for (const pipelens::cmdline::OptionSpec& o : spec.options) {
                if (!parsed.has(o.name)) continue;
                const std::string value = parsed.get(o.name);
                if (!o.takesValue && value != "1") std::abort();
                // What the messages quote never holds a control byte.
                for (char c : pipelens::cmdline::shownValue(value)) {
                    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
                }
                if (o.numeric) {
                    expectConfigErrorsOnly([&] { (void)parsed.integer(o.name, 0, -5, 5); });
                    expectConfigErrorsOnly([&] { (void)parsed.number(o.name, 0.0); });
                }
            }
        });
    }
    return 0;
}
