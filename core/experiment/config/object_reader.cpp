#include "experiment/config/object_reader.hpp"

#include <algorithm>
#include <cmath>

#include "errors.hpp"

namespace pipelens {
using nlohmann::json;

namespace {

// A key as typed when it is short printable ASCII, else escaped and cut short.
std::string printableKey(const std::string& key) {
    const bool plain = key.size() <= 60 && std::all_of(key.begin(), key.end(), [](char c) {
                           return c >= 0x20 && c < 0x7f;
                       });
    return plain ? key : showConfigValue(json(key));
}

}  // namespace

std::string showConfigValue(const json& v) {
    if (v.is_structured()) {
        // A short flat list or object is shown as written; anything else is only described.
        const bool flat = v.size() <= 8 && std::none_of(v.begin(), v.end(), [](const json& e) {
                              return e.is_structured();
                          });
        if (!flat) {
            return v.is_array() ? "[...] (a list of " + std::to_string(v.size()) + ")"
                                : "{...} (an object with " + std::to_string(v.size()) + " keys)";
        }
    }
    std::string text = v.dump(-1, ' ', true, json::error_handler_t::replace);
    constexpr std::size_t kMax = 60;
    if (text.size() > kMax) text = text.substr(0, kMax) + "...";
    return text;
}

bool wholeNumberIn(const json& v, long long lo, long long hi, long long& out) {
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() &&
            v.get<unsigned long long>() > static_cast<unsigned long long>(hi)) {
            return false;
        }
        out = v.get<long long>();
        return out >= lo && out <= hi;
    }
    if (!v.is_number_float()) return false;
    const double x = v.get<double>();
    if (!std::isfinite(x) || std::floor(x) != x || x < static_cast<double>(lo) ||
        x > static_cast<double>(hi)) {
        return false;
    }
    out = static_cast<long long>(x);
    return true;
}

ObjectReader::ObjectReader(const json& obj, std::string path) : obj_(obj), path_(std::move(path)) {
    if (!obj_.is_object()) {
        throw ConfigError(where() + " = " + showConfigValue(obj_) +
                          " is not allowed: a JSON object");
    }
}

bool ObjectReader::has(const std::string& key) {
    known_.insert(key);
    return obj_.contains(key);
}

const json& ObjectReader::at(const std::string& key) {
    known_.insert(key);
    return obj_.at(key);
}

std::string ObjectReader::field(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
}

// The table's text says what is allowed, bounds included (tst_config checks each against the
// check of a typed edit), so nothing is added to it.
long long ObjectReader::integer(const std::string& key, long long def, const IntLimit& limit) {
    if (!has(key)) return def;
    const json& v = obj_.at(key);
    long long x = 0;
    if (!wholeNumberIn(v, limit.lo, limit.hi, x)) {
        throw ConfigError(field(key) + " = " + showConfigValue(v) +
                          " is not allowed: " + std::string(limit.allowed));
    }
    return x;
}

double ObjectReader::number(const std::string& key, double def, const RealLimit& limit) {
    if (!has(key)) return def;
    const json& v = obj_.at(key);
    if (!v.is_number() || !limit.allows(v.get<double>())) {
        throw ConfigError(field(key) + " = " + showConfigValue(v) +
                          " is not allowed: " + std::string(limit.allowed));
    }
    return v.get<double>();
}

void requireWithin(const std::string& field, long long value, const IntLimit& limit) {
    if (!limit.allows(value)) {
        throw ConfigError(field + " = " + std::to_string(value) +
                          " is not allowed: " + std::string(limit.allowed));
    }
}

void requireWithin(const std::string& field, std::uint64_t value, const IntLimit& limit) {
    const bool fits = value <= static_cast<std::uint64_t>(limit.hi);
    if (!fits || !limit.allows(static_cast<long long>(value))) {
        throw ConfigError(field + " = " + std::to_string(value) +
                          " is not allowed: " + std::string(limit.allowed));
    }
}

void requireWithin(const std::string& field, double value, const RealLimit& limit) {
    if (!limit.allows(value)) {
        throw ConfigError(field + " = " + showConfigValue(json(value)) +
                          " is not allowed: " + std::string(limit.allowed));
    }
}

std::string ObjectReader::text(const std::string& key, const std::string& def,
                               const std::vector<std::string>& choices) {
    if (!has(key)) return def;
    const json& v = obj_.at(key);
    std::string allowed = "a string";
    if (!choices.empty()) {
        allowed = "one of";
        for (size_t i = 0; i < choices.size(); ++i) allowed += (i ? ", " : " ") + choices[i];
    }
    if (!v.is_string()) {
        throw ConfigError(field(key) + " = " + showConfigValue(v) + " is not allowed: " + allowed);
    }
    std::string s = v.get<std::string>();
    if (!choices.empty() && std::find(choices.begin(), choices.end(), s) == choices.end()) {
        throw ConfigError(field(key) + " = " + showConfigValue(v) + " is not allowed: " + allowed);
    }
    return s;
}

bool ObjectReader::boolean(const std::string& key, bool def) {
    if (!has(key)) return def;
    const json& v = obj_.at(key);
    if (!v.is_boolean()) {
        throw ConfigError(field(key) + " = " + showConfigValue(v) +
                          " is not allowed: true or false");
    }
    return v.get<bool>();
}

void ObjectReader::rejectUnknown() const {
    for (const auto& [key, value] : obj_.items()) {
        if (!known_.count(key)) {
            std::string allowed;
            for (const auto& k : known_) allowed += (allowed.empty() ? "" : ", ") + k;
            throw ConfigError("unknown key " + field(printableKey(key)) +
                              " (allowed here: " + allowed + ")");
        }
    }
}

std::string ObjectReader::where() const {
    return path_.empty() ? "config" : path_;
}

}  // namespace pipelens
