"""The Python loop with balancenet's lines and `balancenet train` (the C++ trainer) take the same steps: the
same model (the script's, traced), the same data (as npy), the same split and SGD give the same parameters."""
import os

import torch

from bn_testing import BINARY, EXAMPLE, TempDirTest, alone, exactness_bound, launch, main, run

ARGS = ["--steps", "12", "--global-batch", "32", "--lr", "0.1", "--momentum", "0.9", "--seed", "0"]


class SameAsCppTrainer(TempDirTest):
    def test_python_loop_and_cpp_trainer_agree(self):
        inputs = self.path("inputs")
        self.assertSucceeded(alone(EXAMPLE, [*ARGS, "--save-inputs", inputs]))
        trace = self.path("trace.pt")
        flags = ["--workers", "3", "--split", "5,20,7", "--policy", "static"]
        self.assertSucceeded(launch([*flags, "--run-dir", self.path("py")], EXAMPLE, [*ARGS, "--trace", trace]))
        exported = self.path("cpp.pt")
        self.assertSucceeded(run([BINARY, "train", *flags, *ARGS, "--model", os.path.join(inputs, "model.pt"),
                                  "--data", f"npy:{inputs}/x.npy,{inputs}/y.npy", "--val-fraction", "0",
                                  "--threads", "1", "--run-dir", self.path("cpp"), "--export", exported]))
        state = torch.load(exported)
        cpp = torch.cat([state[k].reshape(-1) for k in ("0.weight", "0.bias", "2.weight", "2.bias")])
        python = torch.load(trace)[-1]
        self.assertLess((cpp - python).abs().max().item(), exactness_bound(python, 12))


if __name__ == "__main__":
    main()
