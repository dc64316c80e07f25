// The balancenet command: everything lives in the cli module; main only hands over.
#include "balancenet/cli/CommandLine.h"

int main(int argc, char** argv) { return balancenet::cli::runCommandLine(argc, argv); }
