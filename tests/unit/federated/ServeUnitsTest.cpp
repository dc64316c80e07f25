// `federate serve`'s pure pieces: a task's give-up time (RoundTimeout), the enrolment records and the server's
// admission check, the model signature (same for the same architecture and data shape, else different).
#include <gtest/gtest.h>

#include "balancenet/core/Error.h"
#include "balancenet/federated/Enrolment.h"
#include "balancenet/federated/RoundTimeout.h"
#include "balancenet/federated/process/ModelWeights.h"
#include "balancenet/models/ModelZoo.h"

namespace balancenet::federated {
namespace {

TimeoutRule rule() {
  TimeoutRule r;
  r.computeMultiple = 4;
  r.firstRoundS = 100;
  r.transferBytesPerS = 1e6;
  r.slackS = 2;
  return r;
}

TEST(RoundTimeout, AMeasuredClientGetsAMultipleOfItsExpectedComputePlusTransferAndSlack) {
  TaskTiming t{1000, 100, 50, 500000, 0};  // 10 s at its own speed, 1 MB there and back
  EXPECT_DOUBLE_EQ(expectedComputeSeconds(t, rule()), 10);
  EXPECT_DOUBLE_EQ(giveUpSeconds(t, rule()), 4 * 10 + 1 + 2);
}

TEST(RoundTimeout, AnUnmeasuredClientIsExpectedAtTheSlowestMeasuredSpeedElseTheFirstRoundDefault) {
  TaskTiming t{1000, 0, 50, 0, 0};
  EXPECT_DOUBLE_EQ(expectedComputeSeconds(t, rule()), 20);  // the slowest measured: 50 samples/s
  EXPECT_DOUBLE_EQ(giveUpSeconds(t, rule()), 4 * 20 + 2);
  t.slowestMeasured = 0;
  EXPECT_DOUBLE_EQ(expectedComputeSeconds(t, rule()), 100);
  EXPECT_DOUBLE_EQ(giveUpSeconds(t, rule()), 4 * 100 + 2);
}

TEST(RoundTimeout, ATaskWithADeadlineIsGivenUpItsDeadlinePlusTransferAndSlack) {
  TaskTiming t{1000, 10, 10, 1000000, 5};  // 100 s at its speed, but it stops itself at 5 s
  EXPECT_DOUBLE_EQ(expectedComputeSeconds(t, rule()), 5);
  EXPECT_DOUBLE_EQ(giveUpSeconds(t, rule()), 5 + 2 + 2);
}

Enrolment sample() { return {"site-3", 1234, {600, 634}, {37764, 0xfeedbeefcafe1234ull}, ""}; }

// --time-budget-s within a round: a task's deadline is cut to the budget's remaining time, never below a step's room.
TEST(RoundTimeout, ATasksDeadlineIsCutToTheTimeBudgetsRemainder) {
  EXPECT_EQ(deadlineWithinBudget(5, 0, 100), 5) << "no budget: the strategy's deadline";
  EXPECT_EQ(deadlineWithinBudget(0, 0, 100), 0) << "no budget, no deadline";
  EXPECT_DOUBLE_EQ(deadlineWithinBudget(0, 60, 45.5), 14.5) << "no deadline: the budget's remainder";
  EXPECT_DOUBLE_EQ(deadlineWithinBudget(5, 60, 45.5), 5) << "the deadline ends first";
  EXPECT_DOUBLE_EQ(deadlineWithinBudget(20, 60, 45.5), 14.5) << "the budget ends first";
  EXPECT_DOUBLE_EQ(deadlineWithinBudget(20, 60, 61), kLeastTaskSeconds) << "sent past the budget";
}

TEST(Enrolment, RecordsSurviveTheRoundTrip) {
  const Enrolment e = decodeEnrolment(encodeEnrolment(sample()));
  EXPECT_EQ(e.name, "site-3");
  EXPECT_EQ(e.samples, 1234);
  EXPECT_EQ(e.labelCounts, (std::vector<int64_t>{600, 634}));
  EXPECT_TRUE(e.signature == sample().signature);  // all 64 bits of the hash
  const ServedModel m = decodeServedModel(encodeServedModel({"gpt", 0.5, 0, 2, 4, 64, 99, 10, 0.25}));
  EXPECT_EQ(m.name, "gpt");
  EXPECT_EQ(m.width, 0.5);
  EXPECT_EQ(m.embed, 64);
  EXPECT_EQ(m.seed, 99u);
  EXPECT_EQ(m.classes, 10) << "a client builds the server's output size, whatever labels its shard has";
  EXPECT_EQ(m.clientEvalFraction, 0.25);
  const EnrolmentReply r = decodeReply(encodeReply({true, 7, ""}));
  EXPECT_TRUE(r.accepted);
  EXPECT_EQ(r.client, 7);
  EXPECT_THROW(decodeEnrolment("{\"name\":\"x\"}"), RuntimeFailure);
  EXPECT_THROW(decodeReply("not json"), RuntimeFailure);
}

TEST(Enrolment, TheServerRefusesAnotherSignatureAnotherModelAndNoSamples) {
  const ModelSignature server = sample().signature;
  EXPECT_FALSE(enrolmentRefusal(sample(), "mlp", server));
  Enrolment e = sample();
  e.signature.hash ^= 1;
  ASSERT_TRUE(enrolmentRefusal(e, "mlp", server));
  EXPECT_NE(enrolmentRefusal(e, "mlp", server)->find("other classes or another input shape"), std::string::npos);
  e = sample();
  e.model = "cnn";
  ASSERT_TRUE(enrolmentRefusal(e, "mlp", server));
  EXPECT_NE(enrolmentRefusal(e, "mlp", server)->find("asked for model cnn"), std::string::npos);
  e.model = "mlp";
  EXPECT_FALSE(enrolmentRefusal(e, "mlp", server));
  e.samples = 0;
  EXPECT_TRUE(enrolmentRefusal(e, "mlp", server));
}

ModelSignature signatureOf(int64_t classes, std::vector<int64_t> input) {
  models::ModelOptions o;
  o.name = "mlp";
  o.outputs = classes;
  o.inputShape = std::move(input);
  return modelSignature(*models::buildModel(o).net);
}

TEST(ModelSignature, SameArchitectureAndDataShapeMatchOthersDoNot) {
  EXPECT_TRUE(signatureOf(10, {1, 28, 28}) == signatureOf(10, {1, 28, 28}));
  EXPECT_FALSE(signatureOf(10, {1, 28, 28}) == signatureOf(9, {1, 28, 28}));
  EXPECT_FALSE(signatureOf(10, {1, 28, 28}) == signatureOf(10, {3, 28, 28}));
}

}  // namespace
}  // namespace balancenet::federated
