// A pipeline.csv written by hand: GPipe with S = 2 stages and M = 3 micro-batches, so every figure the
// report derives from it can be worked out on paper.
#pragma once
#include <fstream>
#include <string>

namespace balancenet::report::fixture {

// Step 5 (the last): a forward takes 1 ms, a backward 2 ms on either stage, from t = 1000 ms.
//   stage 0 (rank 0): F0 0-1, F1 1-2, F2 2-3,                 B0 6-8, B1 8-10, B2 10-12
//   stage 1 (rank 1):        F0 1-2, F1 2-3, F2 3-4, B0 4-6, B1 6-8, B2 8-10
// Span 12 ms; each stage busy 3 + 6 = 9 ms, idle 3 ms: bubble 3/12 = 0.25 = (S-1)/(M+S-1).
// Step 4, before it, is one forward and one backward per stage, 0.5 ms each.
inline const char* kGpipeCsv =
    "step,rank,stage,replica,kind,micro,start_ms,end_ms\n"
    "4,0,0,0,F,0,900,900.5\n4,1,1,0,F,0,900.5,901\n4,1,1,0,B,0,901,901.5\n4,0,0,0,B,0,901.5,902\n"
    "5,0,0,0,F,0,1000,1001\n5,0,0,0,F,1,1001,1002\n5,0,0,0,F,2,1002,1003\n"
    "5,1,1,0,F,0,1001,1002\n5,1,1,0,F,1,1002,1003\n5,1,1,0,F,2,1003,1004\n"
    "5,1,1,0,B,0,1004,1006\n5,1,1,0,B,1,1006,1008\n5,1,1,0,B,2,1008,1010\n"
    "5,0,0,0,B,0,1006,1008\n5,0,0,0,B,1,1008,1010\n5,0,0,0,B,2,1010,1012\n";

inline void writeText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace balancenet::report::fixture
