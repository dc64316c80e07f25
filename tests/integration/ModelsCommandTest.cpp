// `balancenet models`: the zoo table and `--blocks MODEL`, the per-block table pipeline cuts are read from.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "BinaryFixture.h"

namespace balancenet::testing {
namespace {

class ModelsCommand : public BinaryFixture {};

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

TEST_F(ModelsCommand, BlocksListsEveryBlockWithACountLine) {
  auto r = run({"models", "--blocks", "resnet18", "--width", "0.25"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  const auto lines = linesOf(r.output);
  ASSERT_EQ(lines.size(), 12u) << r.output;  // header, 10 blocks, count
  EXPECT_NE(lines[0].find("output shape"), std::string::npos);
  EXPECT_NE(lines[1].find("stem"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("res1.1"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("residual"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("16x28x28"), std::string::npos) << lines[2];  // 64 * 0.25 planes at full size
  EXPECT_NE(lines[10].find("fc1"), std::string::npos) << lines[10];
  EXPECT_EQ(lines.back(), "10 blocks in resnet18 at --width 0.25");
}

TEST_F(ModelsCommand, ATorchScriptModelThatIsNotASequenceIsOneBlock) {
  // tiny_cnn's forward applies relu and flatten between its children, so chaining them is not its forward.
  auto r = run({"models", "--blocks", std::string(BALANCENET_SOURCE_DIR) + "/tests/fixtures/tiny_cnn.pt"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("whole"), std::string::npos) << r.output;
  EXPECT_NE(linesOf(r.output).back().find("1 block in"), std::string::npos) << r.output;
}

TEST_F(ModelsCommand, WidthScalesTheZooTable) {
  auto r = run({"models", "--width", "0.5"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("vgg16"), std::string::npos);
  EXPECT_NE(r.output.find("at --width 0.5;"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ngpt "), std::string::npos) << "the token model has its row: " << r.output;
}

TEST_F(ModelsCommand, GptBlocksAreTheEmbeddingEachTransformerBlockAndTheHead) {
  auto r = run({"models", "--blocks", "gpt"});
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("embed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("block6"), std::string::npos) << r.output;  // the default 6 layers
  EXPECT_NE(r.output.find("256x256"), std::string::npos) << "the head's output: 256 tokens x 256 logits\n" << r.output;
  EXPECT_NE(linesOf(r.output).back().find("8 blocks in gpt"), std::string::npos) << r.output;
}

TEST_F(ModelsCommand, UnknownModelIsAOneLineUsageError) {
  expectOneLineError(run({"models", "--blocks", "nosuch"}), "unknown --model 'nosuch'", 2);
  expectOneLineError(run({"models", "--blocks", "cnn", "--width", "0"}), "--width must be a positive number", 2);
}

}  // namespace
}  // namespace balancenet::testing
