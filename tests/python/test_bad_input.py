"""Bad input from a Python script gets one line naming the problem and exit 2, as from the command line."""
import textwrap

from bn_testing import EXAMPLE, TempDirTest, alone, launch, main


class BadInput(TempDirTest):
    def script(self, body):
        path = self.path("script.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def test_init_with_rank_set_but_no_launcher(self):
        path = self.script("""
            import balancenet.torch as bn
            bn.init()
            """)
        self.assertOneLine(alone(path, env={"RANK": "0", "WORLD_SIZE": "2"}), "not started by `balancenet launch`")

    def test_dataset_shorter_than_one_global_batch(self):
        result = launch(["--workers", "2", "--run-dir", self.path("run")], EXAMPLE,
                        ["--samples", "16", "--global-batch", "32"])
        self.assertOneLine(result, "fewer than one global batch")

    def test_split_that_does_not_sum_to_the_global_batch(self):
        result = launch(["--workers", "3", "--split", "5,20,7", "--run-dir", self.path("run")], EXAMPLE,
                        ["--global-batch", "64"])
        self.assertOneLine(result, "sums to 32")

    def test_model_without_ddp(self):
        path = self.script("""
            import torch
            import balancenet.torch as bn
            bn.init()
            bn.attach(torch.nn.Linear(2, 2))
            """)
        self.assertOneLine(alone(path, cwd=self.tmp), "needs the DistributedDataParallel model")

    def test_micro_batches_of_no_sample_or_of_tensors_that_disagree(self):
        path = self.script("""
            import sys
            import torch
            import balancenet.torch as bn
            x, y = torch.zeros(6, 3), torch.zeros(6)
            parts = [(m.samples, round(m.scale, 4), m.last) for m in bn.micro_batches({"x": x, "y": y}, 4)]
            assert parts == [(3, 0.5, False), (3, 0.5, True)], parts
            assert [m.samples for m in bn.micro_batches((x, y), None)] == [6]
            assert abs(sum(m.scale for m in bn.micro_batches((x, y), 1)) - 1) < 1e-12
            list(bn.micro_batches((x, torch.zeros(5)), 2) if sys.argv[1] == "shapes" else bn.micro_batches(x, 0))
            """)
        self.assertOneLine(alone(path, ["shapes"]), "must share their first dimension (the samples), got [5, 6]")
        self.assertOneLine(alone(path, ["zero"]), "max_samples must be a positive integer or None, got 0")

    def test_loader_before_init(self):
        path = self.script("""
            import balancenet.torch as bn
            bn.DataLoader(list(range(10)), global_batch=2)
            """)
        self.assertOneLine(alone(path), "needs bn.init() first")


    def assertImportRefused(self, path, *words):
        result = alone(path)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        last = result.stderr.strip().splitlines()[-1]
        self.assertTrue(last.startswith("ImportError: balancenet was built against"), result.stderr[-3000:])
        for w in words:
            self.assertIn(w, last)

    # The package imported into another torch than the one it was built against (here the same torch claiming to
    # be another): one line naming both, not a crash in the extension.
    def test_package_built_against_another_torch_version(self):
        path = self.script("""
            import torch
            torch.__version__ = "2.10.1"
            import balancenet.torch
            """)
        self.assertImportRefused(path, "this Python imports torch 2.10.1", "pip install --no-build-isolation")

    def test_package_built_against_a_cuda_torch_imported_into_a_cpu_one(self):
        path = self.script("""
            import torch
            torch.version.cuda = None
            import balancenet.torch
            """)
        self.assertImportRefused(path, "a CPU-only torch")


if __name__ == "__main__":
    main()
