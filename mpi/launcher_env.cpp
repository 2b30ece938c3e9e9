#include "launcher_env.hpp"

#include <cstdlib>
#include <initializer_list>

namespace pipelens {

int launcherWorldSize() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
        if (const char* v = std::getenv(name)) {
            const int n = std::atoi(v);
            if (n > 0) return n;
        }
    }
    return 1;
}

}  // namespace pipelens
