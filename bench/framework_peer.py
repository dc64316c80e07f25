#!/usr/bin/env python3
"""One side of bench/frameworks_vs_ddp.sh: a framework's own training (Lightning's Trainer with strategy "ddp",
transformers' Trainer, an Accelerate loop, an FSDP2 loop) or the same with balancenet's integration (--balanced), on the examples'
models and data, every rank paced to its --node-speed as bench/ddp_peer.py paces (the same pacing on both sides, so
that the split alone differs). Rank 0 writes ddp_peer.py's summary JSON (step_seconds, evaluations) to --out.

    balancenet launch --workers 4 --threads 1 bench/framework_peer.py --framework lightning --balanced \\
        --node-speed 100,100,100,25 --global-batch 128 --steps 60 --out lightning-bn.json
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # ddp_peer's cnn


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--framework", choices=["lightning", "transformers", "accelerate", "fsdp2"], required=True)
    p.add_argument("--balanced", action="store_true")
    p.add_argument("--node-speed", help="samples/s of each rank, comma separated (default: no pacing, the hosts'"
                   " own speed, as on the testbed)")
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp",
                   help="lightning: the example's MLP or the zoo's cnn (ddp_peer.py's: the testbed's model)")
    p.add_argument("--data-dir", default=None, help="lightning, accelerate: Fashion-MNIST's IDX files (default: "
                   "Debian's dataset-fashion-mnist)")
    p.add_argument("--global-batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--eval-every", type=int, default=0,
                   help="test accuracy every N steps (transformers: next-token accuracy on held-out fortunes)")
    p.add_argument("--target-accuracy", type=float, default=0, help="stop at the first evaluation at or above it")
    p.add_argument("--out", required=True)
    return p.parse_args()


class Pacer:
    """Makes this rank's forward and backward last at least its batch / its speed: after the forward pass it sleeps
    for the paced time less the compute it measured per sample at the last step (from the forward's start to the
    last gradient, the sleep left out), as ddp_peer.py does before its backward."""

    def __init__(self, module, speed, whole=False):
        self.speed, self.per_sample, self.slept, self.start, self.batch = speed, 0.0, 0.0, 0.0, 1
        self.whole = whole  # sleep the whole batch / speed, the compute not deducted
        module.register_forward_pre_hook(self.begin, with_kwargs=True)
        module.register_forward_hook(self.pace)
        for parameter in () if whole else module.parameters():
            parameter.register_hook(self.mark)

    def begin(self, module, args, kwargs):
        first = args[0] if args else next(iter(kwargs.values()))
        self.start, self.batch, self.slept = time.perf_counter(), max(1, len(first)), 0.0

    def pace(self, module, args, output):
        if torch.is_grad_enabled() and (self.per_sample > 0 or self.whole):  # not in evaluation; after a first step
            self.slept = max(0.0, self.batch / self.speed - self.per_sample * self.batch)
            time.sleep(self.slept)

    def mark(self, grad):
        self.per_sample = (time.perf_counter() - self.start - self.slept) / self.batch


def pace(module, args, whole=False):
    """The pacer of --node-speed on this rank, if one is given."""
    if args.node_speed:
        Pacer(module, [float(v) for v in args.node_speed.split(",")][int(os.environ.get("RANK", "0"))], whole)


def fashion_mnist(args, part):
    from example_data import FASHION_MNIST, fashion_mnist
    return fashion_mnist(part, args.data_dir or FASHION_MNIST)


class Record:
    """Rank 0's wall time of every optimizer step, and the evaluations: ddp_peer.py's summary."""

    def __init__(self, args, framework):
        self.args, self.framework = args, framework
        self.steps, self.evaluations, self.train_seconds, self.started = [], [], 0.0, None

    def begin(self):
        self.started = time.perf_counter()

    def end(self):
        self.steps.append(time.perf_counter() - self.started)
        self.train_seconds += self.steps[-1]

    def evaluated(self, accuracy):
        self.evaluations.append({"step": len(self.steps), "accuracy": accuracy, "train_seconds": self.train_seconds})
        return bool(self.args.target_accuracy) and accuracy >= self.args.target_accuracy

    def write(self):
        if int(os.environ.get("RANK", "0")) != 0:
            return
        summary = {"framework": self.framework, "nodes": int(os.environ.get("WORLD_SIZE", "1")),
                   "global_batch": self.args.global_batch, "steps": len(self.steps), "step_seconds": self.steps,
                   "train_seconds": self.train_seconds, "evaluations": self.evaluations,
                   "target_accuracy": self.args.target_accuracy}
        with open(self.args.out + ".tmp", "w") as f:
            json.dump(summary, f, indent=2)
        os.replace(self.args.out + ".tmp", self.args.out)


def accuracy_on(model, test, world, rank):
    """Test accuracy, the test set sharded over the ranks and summed (torch's default group)."""
    with torch.no_grad():
        x, y = test.tensors
        part = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
        counts = torch.tensor([(model(x[part]).argmax(dim=1) == y[part]).sum().item(), len(y[part])], dtype=torch.float64)
    if world > 1:
        torch.distributed.all_reduce(counts)
    return (counts[0] / counts[1]).item()


def lightning(args, record):
    import lightning.pytorch as L
    import lightning_train as example

    world, local = int(os.environ.get("WORLD_SIZE", "1")), int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    L.seed_everything(0, verbose=False)
    train, test = fashion_mnist(args, "train"), fashion_mnist(args, "t10k")
    model = example.Classifier(784, 256, 0.05)
    if args.model == "cnn":
        from ddp_peer import cnn
        model.net = torch.nn.Sequential(torch.nn.Unflatten(1, (1, 28, 28)), cnn())
    pace(model.net, args)

    class Timing(L.Callback):
        def on_train_batch_start(self, trainer, module, batch, batch_idx):
            record.begin()

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            record.end()
            steps = len(record.steps)
            if args.eval_every and steps % args.eval_every == 0:
                if record.evaluated(accuracy_on(module.net, test, world, trainer.global_rank)):
                    trainer.should_stop = True

    if args.balanced:
        from balancenet.lightning import BalancedStrategy
        strategy = BalancedStrategy(global_batch=args.global_batch)
    else:
        strategy = "ddp"
    data = torch.utils.data.DataLoader(train, batch_size=args.global_batch // world, shuffle=True)
    trainer = L.Trainer(accelerator="cpu", devices=local, num_nodes=world // local, strategy=strategy, max_steps=args.steps, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        callbacks=[Timing()], limit_val_batches=0)
    trainer.fit(model, data)


def token_accuracy_on(model, held_out, collate, world, rank):
    """Next-token accuracy on held-out sequences (the padding left out), sharded over the ranks and summed."""
    with torch.no_grad():
        part = [held_out[i] for i in range(rank * len(held_out) // world, (rank + 1) * len(held_out) // world)]
        batch = collate(part)
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1]
        labels = batch["labels"][:, 1:]
        counted = labels != -100
        counts = torch.tensor([(logits.argmax(dim=-1) == labels)[counted].sum().item(), counted.sum().item()],
                              dtype=torch.float64)
    if world > 1:
        torch.distributed.all_reduce(counts)
    return (counts[0] / counts[1]).item()


def transformers(args, record):
    import hf_train as example
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

    world = int(os.environ.get("WORLD_SIZE", "1"))
    torch.manual_seed(0)
    train_samples, held_out_samples = 4096, 512  # the held-out fortunes follow the training ones
    options = argparse.Namespace(data="fortunes", samples=train_samples + held_out_samples, max_length=64,
                                 task="causal-lm")
    sequences = example.Sequences(options)
    train = torch.utils.data.Subset(sequences, range(train_samples))
    held_out = torch.utils.data.Subset(sequences, range(train_samples, len(sequences)))
    config = GPT2Config(vocab_size=example.VOCAB, n_positions=64, n_embd=64, n_layer=2, n_head=4,
                        pad_token_id=example.PAD, eos_token_id=example.EOS, bos_token_id=example.EOS)
    model = GPT2LMHeadModel(config)
    pace(model.transformer, args)

    class Timing(TrainerCallback):
        def on_step_begin(self, training, state, control, **kwargs):
            record.begin()

        def on_step_end(self, training, state, control, **kwargs):
            record.end()
            steps = len(record.steps)
            if args.eval_every and steps % args.eval_every == 0:
                accuracy = token_accuracy_on(model, held_out, example.pad, world, training.process_index)
                if record.evaluated(accuracy):
                    control.should_training_stop = True

    training = TrainingArguments(output_dir="hf-bench", max_steps=args.steps, learning_rate=1e-3, use_cpu=True,
                                 per_device_train_batch_size=args.global_batch // world, report_to="none",
                                 save_strategy="no", disable_tqdm=True, logging_steps=max(1, args.steps),
                                 ddp_backend="gloo", seed=0)
    common = dict(model=model, args=training, train_dataset=train, data_collator=example.pad, callbacks=[Timing()])
    if args.balanced:
        from balancenet.transformers import BalancedTrainer
        trainer = BalancedTrainer(**common, global_batch=args.global_batch)
    else:
        trainer = Trainer(**common)
    trainer.train()


def accelerate(args, record):
    from accelerate import Accelerator

    torch.manual_seed(0)
    accelerator = Accelerator(cpu=True)
    world, rank = accelerator.num_processes, accelerator.process_index
    train, test = fashion_mnist(args, "train"), fashion_mnist(args, "t10k")
    net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    pace(net, args)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loader = torch.utils.data.DataLoader(train, batch_size=args.global_batch // world, shuffle=True)
    if args.balanced:
        import balancenet.accelerate
        model, optimizer = accelerator.prepare(net, optimizer)
        loader = balancenet.accelerate.balance(accelerator, model, optimizer, loader, global_batch=args.global_batch)
    else:
        model, optimizer, loader = accelerator.prepare(net, optimizer, loader)
    while len(record.steps) < args.steps:
        record.begin()
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            record.end()
            steps = len(record.steps)
            if args.eval_every and steps % args.eval_every == 0 and record.evaluated(accuracy_on(net, test, world, rank)):
                return
            if steps >= args.steps:
                return
            record.begin()


def fsdp2(args, record):
    """examples/python/fsdp2_train.py's GPT sharded with fully_shard (each block and the root), its default shape.
    The pacer sleeps the whole batch / speed after the forward pass: FSDP2's collectives run inside the backward (an
    all-gather and a reduce-scatter per module), so a rank cannot tell its own compute from its wait for the others
    there, and deducting it would pace the fast ranks by the slow one. The real compute then comes on top of the
    pace, on both sides alike."""
    import torch.distributed as dist
    import fsdp2_train as example
    from gpt_ddp import loss_of, token_data

    shape = argparse.Namespace(vocab=64, context=32, embed=64, layers=2, heads=2, seed=0, mixed_precision=None)
    data = token_data(shape, sequences=4096)
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    if args.balanced:
        import balancenet.torch as bn
        bn.init()
    model = example.sharded_model(shape, torch.device("cpu"))
    pace(model, args, whole=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    if args.balanced:
        bn.attach(model)
        loader = bn.DataLoader(data, global_batch=args.global_batch, seed=0)
    else:
        sampler = torch.utils.data.DistributedSampler(data, shuffle=True, seed=0)
        loader = torch.utils.data.DataLoader(data, batch_size=args.global_batch // world, sampler=sampler)
    while len(record.steps) < args.steps:
        record.begin()
        for x, y in loader:
            loss = loss_of(model, x, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if args.balanced:
                bn.step_done(loss)
            record.end()
            if len(record.steps) >= args.steps:
                break
            record.begin()
    if args.balanced:
        bn.finish()
    dist.destroy_process_group()


def main():
    args = arguments()
    record = Record(args, ("balancenet." if args.balanced else "") + args.framework)
    {"lightning": lightning, "transformers": transformers, "accelerate": accelerate, "fsdp2": fsdp2}[args.framework](
        args, record)
    record.write()


if __name__ == "__main__":
    main()
