// Module a of the module-order fixture (tests/build/CMakeLists.txt): it uses module b.
#pragma once
#include "balancenet/b/B.h"
