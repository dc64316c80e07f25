// MetricStyle: how a run's throughput and evaluations read, from what its samples are (images, token
// windows, regression rows): "samples/s" or "tokens/s"; accuracy, or perplexity and bits per byte, or mse.
#pragma once
#include <cstdint>
#include <string>

#include "balancenet/metrics/RunSummary.h"

namespace balancenet::metrics {

struct MetricStyle {
  const char* rateUnit = "samples";  // "tokens" where a sample is a window of tokens
  int64_t unitsPerSample = 1;        // tokens per window
  bool accuracy = true;              // classes and tokens (per-token accuracy); not regression
  bool perplexity = false;           // token targets: exp(mean loss per token)
  bool bitsPerByte = false;          // text: (mean loss per byte) / ln 2
};

// "test accuracy 88.12%  test loss 0.3301", "val loss 1.2345  perplexity 3.44  1.781 bits/byte  token
// accuracy 61.20%", "test mse 0.0123".
std::string formatEval(const EvalPoint& point, const MetricStyle& style);

// The summary's fields of the style: tokens_per_second, and the last evaluation's perplexity and bits per
// byte; nothing for samples.
void addStyleFields(RunSummary& summary, const MetricStyle& style);

}  // namespace balancenet::metrics
