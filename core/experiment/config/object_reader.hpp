#pragma once
// Reading one JSON object of a config: typed keys with ranges, and every error a ConfigError
// naming the key (with its path), the value given and what is allowed. Keys nobody read are
// refused by rejectUnknown.
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "experiment/config/field_limits.hpp"
#include "util/named_enum.hpp"

namespace pipelens {

// A short, escaped excerpt of a value for messages: never the whole of a large or nested value.
std::string showConfigValue(const nlohmann::json& v);

// Integer keys are read as long long; a double is accepted when it is a whole number inside
// [lo, hi], checked before any cast (casting 1e300 to an integer is undefined).
bool wholeNumberIn(const nlohmann::json& v, long long lo, long long hi, long long& out);

class ObjectReader {
  public:
    ObjectReader(const nlohmann::json& obj, std::string path);
    ObjectReader(const ObjectReader&) = delete;
    ObjectReader& operator=(const ObjectReader&) = delete;

    bool has(const std::string& key);
    const nlohmann::json& at(const std::string& key);
    std::string field(const std::string& key) const;

    // A number within its range, the range and its text from the config's table
    // (field_limits.hpp).
    long long integer(const std::string& key, long long def, const IntLimit& limit);
    double number(const std::string& key, double def, const RealLimit& limit);
    std::string text(const std::string& key, const std::string& def,
                     const std::vector<std::string>& choices = {});
    // One of the table's names (a ConfigError lists them all).
    template <typename E, std::size_t N>
    E choice(const std::string& key, E def, const EnumNames<E, N>& table) {
        return *parseEnum(table, text(key, std::string(enumName(table, def)), enumNames(table)));
    }
    bool boolean(const std::string& key, bool def);
    // Call last: any key not read is a typo or an unsupported option.
    void rejectUnknown() const;

  private:
    std::string where() const;
    const nlohmann::json& obj_;
    std::string path_;
    std::set<std::string> known_;
};

}  // namespace pipelens
