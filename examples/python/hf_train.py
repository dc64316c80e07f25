#!/usr/bin/env python3
"""A Hugging Face Trainer script: a small GPT-2 (random weights from a GPT2Config: nothing is downloaded) learns
causal language modelling on sequences of unequal length, padded by the collator (labels -100 on the padding),
with TrainingArguments as people write them. With --balanced the Trainer is balancenet's (the lines marked "bn:");
without it, transformers' own. Run it with

    balancenet launch --workers 2 --node-speed 100,25 examples/python/hf_train.py --balanced --steps 20

The text is the fortunes of Debian's fortunes package (--data fortunes, bytes as tokens) or random tokens with a
rule to learn (--data synthetic). --reference trains the same model on the same global batches in one process
with transformers alone: the tests compare the two.
"""
import argparse
import glob
import os

import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2ForSequenceClassification, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

FORTUNES = "/usr/share/games/fortunes"
VOCAB = 258  # bytes, then padding and end of text
PAD, EOS = 256, 257


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--balanced", action="store_true", help="BalancedTrainer instead of transformers' Trainer")
    p.add_argument("--reference", action="store_true", help="one process on the whole global batches")
    p.add_argument("--task", choices=["causal-lm", "classify"], default="causal-lm",
                   help="next-token prediction (GPT2LMHeadModel), or a sequence's class (GPT2ForSequenceClassification: "
                        "synthetic data, its class is its step mod 4)")
    p.add_argument("--data", choices=["synthetic", "fortunes"], default="synthetic")
    p.add_argument("--samples", type=int, default=512)
    p.add_argument("--max-length", type=int, default=32)
    p.add_argument("--global-batch", type=int, default=16, help="sequences per global batch (all workers)")
    p.add_argument("--steps", type=int, default=10, help="max_steps (optimizer steps)")
    p.add_argument("--accumulate", type=int, default=1, help="gradient_accumulation_steps")
    p.add_argument("--max-grad-norm", type=float, default=1.0, help="gradient clipping (transformers' default 1.0)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--width", type=int, default=64, help="n_embd")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-every", type=int, default=0, help="save_steps (0: no checkpoints)")
    p.add_argument("--output-dir", default="hf-output")
    p.add_argument("--stop-after", type=int, default=0, help="end training after this many steps, as if the job "
                   "were stopped there (the schedule stays that of --steps; for resuming tests)")
    p.add_argument("--resume", help="a checkpoint folder, or 'last' (train's resume_from_checkpoint)")
    p.add_argument("--out", help="write the final state_dict here (rank 0)")
    return p.parse_args()


class Sequences(torch.utils.data.Dataset):
    """Token sequences of unequal length (the collator pads them): the case where averaging per worker is wrong."""

    def __init__(self, args):
        g = torch.Generator().manual_seed(1234)
        if args.data == "fortunes":
            text = b"".join(open(path, "rb").read() for path in sorted(glob.glob(f"{FORTUNES}/*"))
                            if os.path.isfile(path) and not path.endswith(".dat") and not os.path.islink(path))
            pieces = [piece.strip() for piece in text.split(b"\n%\n") if piece.strip()]
            self.items = [torch.tensor(list(piece[:args.max_length - 1]) + [EOS]) for piece in pieces[:args.samples]]
        else:  # each token is the previous one plus a step of the sequence's own
            self.items, self.classes = [], []
            for _ in range(args.samples):
                length = int(torch.randint(4, args.max_length + 1, (1,), generator=g))
                start, step = torch.randint(0, 256, (2,), generator=g).tolist()
                self.items.append((start + step * torch.arange(length)) % 256)
                self.classes.append(step % 4)
        self.classify = args.task == "classify"

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        if self.classify:
            return {"input_ids": self.items[i], "label": self.classes[i]}
        return {"input_ids": self.items[i]}


def pad(samples):
    """The collator: right padding; the labels are the inputs, -100 where padded (not a prediction target), or the
    sequences' classes."""
    longest = max(len(s["input_ids"]) for s in samples)
    ids = torch.full((len(samples), longest), PAD)
    mask = torch.zeros((len(samples), longest), dtype=torch.long)
    for row, s in enumerate(samples):
        ids[row, :len(s["input_ids"])] = s["input_ids"]
        mask[row, :len(s["input_ids"])] = 1
    if "label" in samples[0]:
        return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([s["label"] for s in samples])}
    return {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}


class StopAfter(TrainerCallback):
    def __init__(self, steps):
        self.steps = steps

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.steps:
            control.should_save, control.should_training_stop = True, True


class ReferenceTrainer(Trainer):
    """One process whose training batches are the engine's global batches, in order (balancenet's sample order)."""

    def __init__(self, *args, global_batch, **kwargs):
        super().__init__(*args, **kwargs)
        self.global_batch = global_batch

    def get_train_dataloader(self):
        from balancenet.torch import global_indices
        n, b, seed = len(self.train_dataset), self.global_batch, self.args.seed
        batches = [global_indices(n, seed, s * b, b) for s in range(n // b)]
        return DataLoader(self.train_dataset, batch_sampler=batches, collate_fn=self.data_collator)


def main():
    args = arguments()
    torch.manual_seed(args.seed)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    config = GPT2Config(vocab_size=VOCAB, n_positions=args.max_length, n_embd=args.width, n_layer=args.layers,
                        n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, pad_token_id=PAD,
                        eos_token_id=EOS, bos_token_id=EOS, num_labels=4)
    model = GPT2ForSequenceClassification(config) if args.task == "classify" else GPT2LMHeadModel(config)
    training = TrainingArguments(output_dir=args.output_dir, max_steps=args.steps, learning_rate=args.lr,
                                 per_device_train_batch_size=max(1, args.global_batch // world),
                                 gradient_accumulation_steps=args.accumulate, max_grad_norm=args.max_grad_norm,
                                 seed=args.seed, data_seed=args.seed, use_cpu=True, report_to="none",
                                 logging_steps=max(1, args.steps // 5), disable_tqdm=True,
                                 save_strategy="steps" if args.save_every else "no", save_steps=args.save_every or 500,
                                 ddp_backend="gloo" if world > 1 else None)
    common = dict(model=model, args=training, train_dataset=Sequences(args), data_collator=pad,
                  callbacks=[StopAfter(args.stop_after)] if args.stop_after else None)
    if args.reference:
        trainer = ReferenceTrainer(**common, global_batch=args.global_batch)
    elif args.balanced:
        from balancenet.transformers import BalancedTrainer  # bn: the import
        trainer = BalancedTrainer(**common, global_batch=args.global_batch, seed=args.seed)  # bn: the trainer
    else:
        trainer = Trainer(**common)
    trainer.train(resume_from_checkpoint=True if args.resume == "last" else args.resume)
    if args.out and trainer.is_world_process_zero():
        torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
