// The balancenet command: everything lives in the launcher module; main only hands over.
#include "balancenet/launcher/CommandLine.h"

int main(int argc, char** argv) { return balancenet::launcher::runCommandLine(argc, argv); }
