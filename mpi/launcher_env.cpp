#include "launcher_env.hpp"

#include <climits>
#include <cstdlib>
#include <initializer_list>

namespace pipelens {

int launcherWorldSize() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
        if (const char* v = std::getenv(name)) {
            const long n = std::strtol(v, nullptr, 10);
            if (n > 0 && n <= INT_MAX) return static_cast<int>(n);
        }
    }
    return 1;
}

}  // namespace pipelens
