// pipelens-cli: the engine without a window. All commands live in cli/.
#include <iostream>

#include "cli.hpp"

int main(int argc, char** argv) { return pipelens::runCli(argc, argv, std::cout, std::cerr); }
