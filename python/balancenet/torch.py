"""balancenet.torch: your own PyTorch DDP loop, with each worker's share of every global batch sized to its
speed, the gradient weighted so that it is exactly the whole batch's, and the split re-balanced live.

    import balancenet.torch as bn
    bn.init()                                         # joins the job `balancenet launch` started
    model = torch.nn.parallel.DistributedDataParallel(model)
    bn.attach(model)                                  # the weighted all-reduce (DDP's comm hook)
    loader = bn.DataLoader(dataset, global_batch=256, num_workers=2, seed=0)
    for x, y in loader:                               # this rank's share of each global batch
        loss = loss_fn(model(x), y); loss.backward(); opt.step(); opt.zero_grad()
        bn.step_done(loss)                            # timings to the orchestrator; the next split may change

The engine is balancenet's C++ one (the policies, the global permutation, steps.csv/splits.csv/summary.json),
loaded as the extension balancenet._engine. docs/python.md has the whole story.
"""
import atexit
import contextlib
import copy
import io
import os
import sys
import time
from collections import deque

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader as _TorchDataLoader
from torch.utils.data import default_collate

from ._extension import _engine
from ._fsdp import attach_fsdp, is_fsdp

UsageError = _engine.UsageError  # bad input: a ValueError; a launched script exits 2 with one line
JobFailure = _engine.JobFailure  # the job failed (a peer died, a timeout): a RuntimeError; exit 1
global_indices = _engine.global_indices  # the engine's sample order, for reference runs in one process

__all__ = ["init", "attach", "DataLoader", "micro_batches", "MicroBatch", "step_done", "steps_done", "record_eval", "finish", "rank", "world_size", "split",
           "run_dir", "UsageError", "JobFailure", "global_indices"]


class _State:
    """The job of this process: the session, and the weight of this rank's gradient in the current step."""
    session = None
    weight = None  # set by the loader for each batch; the comm hook multiplies by it
    failed = False  # an uncaught exception: no collective at exit
    broken = None  # the failure of a gradient all-reduce in this step (the step is taken again or the job ends)
    model = None  # attach()'s module and optimiser, and their state after the last completed step (--elastic)
    optimizer = None
    committed = None


_state = _State()


def init(run_dir=None):
    """Joins the job `balancenet launch` started this process in (its environment says which: RANK,
    WORLD_SIZE, MASTER_ADDR, MASTER_PORT and the job as the launcher resolved it), or, when nothing launched it, makes a job of
    this process alone (writing to `run_dir`, default runs/<time>-<pid>). Also initialises torch.distributed's
    default group (gloo, from the same environment) when the script has not, so that DistributedDataParallel
    works as usual. Returns the session (rank, world_size, run_dir, split). Calling it again returns the same."""
    if _state.session is not None:
        return _state.session
    if "RANK" in os.environ and "BALANCENET_JOB_CONFIG" not in os.environ:
        raise UsageError("bn.init(): this process has RANK set but was not started by `balancenet launch` "
                         "(start the script with `balancenet launch --workers N script.py`, or without RANK to run alone)")
    try:
        _state.session = _engine.Session(run_dir or "")
    except _engine.JobFinishedBeforeJoin as finished:  # a restarted worker came after the end: nothing to do
        print(f"balancenet: {finished}", file=sys.stderr, flush=True)
        sys.exit(0)
    if not dist.is_initialized():
        if "RANK" in os.environ and not _state.session.joined:
            dist.init_process_group("gloo")  # env://: the launcher's store, as under torchrun
        else:
            # Alone, or joining a running job whose torch group is long formed: DDP gets a group of one and the
            # gradients travel over balancenet's group (the comm hook), which this worker joined.
            dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    return _state.session


def _session(what):
    if _state.session is None:
        raise UsageError(f"{what} needs bn.init() first")
    if _state.session.closed:
        raise UsageError(f"{what}: the session closed at the interpreter's exit")
    return _state.session


def rank():
    return _session("bn.rank()").rank


def world_size():
    return _session("bn.world_size()").world_size


def split():
    """The samples of the global batch each rank takes in the current step, in rank order."""
    return list(_session("bn.split()").split)


def run_dir():
    return _session("bn.run_dir()").run_dir


_WEIGHTINGS = ("share", "global")


def attach(model, optimizer=None, weighting="share", loss_multiplier=1, grad_compress="none", compress_warmup=0):
    """Makes `model` (a DistributedDataParallel, or the root of a model sharded with FSDP2's fully_shard)
    synchronise its gradients with balancenet's weighted all-reduce: each rank's bucket is multiplied by its share
    of the global batch and summed, so the result is exactly the gradient of the whole batch's mean loss whatever
    the split (the loss must be a mean over the batch, as DDP assumes). Also with gradient accumulation and
    no_sync(): the split changes only between steps. Under `balancenet launch --elastic`, give the optimizer too:
    a step a dead worker interrupted is taken again from the model and optimizer state after the last completed
    step.
    FSDP2: its reduce-scatters sum each rank's gradient weighted by its share (balancenet/_fsdp.py says how), with
    MixedPrecisionPolicy, clip_grad_norm_ and DCP checkpoints as in plain FSDP2; not under --elastic.

    `weighting`: "share" (the default) for a loss that is each rank's mean over its own samples; "global" for a
    loss that is this rank's sum divided by the whole step's count of items over all workers (transformers'
    num_items_in_batch): its buckets are summed unweighted, exact whatever the split. `loss_multiplier`: a factor
    the loss carries beyond that, which the weights divide out (transformers' Trainer multiplies by the world size
    for DDP's average).

    `grad_compress`: "none" (the default: exact float32), "bf16", "fp16", "int8" or "powersgd[:RANK]", as
    `balancenet train --grad-compress` takes it and by the same engine code: the weighted buckets cross the wire in
    fewer bits, with error feedback per bucket (what compression dropped is added to the next step's bucket), so
    unequal shares still sum to the whole batch's gradient up to the compression error; `compress_warmup`: its
    first steps exact (PyTorch PowerSGD's start_powerSGD_iter). DDP models only, not under --elastic."""
    session = _session("bn.attach()")
    if weighting not in _WEIGHTINGS:
        raise UsageError(f"bn.attach(): weighting must be one of {', '.join(_WEIGHTINGS)}, got {weighting!r}")
    if isinstance(loss_multiplier, bool) or not isinstance(loss_multiplier, (int, float)) or not loss_multiplier > 0:
        raise UsageError(f"bn.attach(): loss_multiplier must be a positive number, got {loss_multiplier!r}")
    if grad_compress != "none" and (is_fsdp(model) or session.elastic):
        raise UsageError("bn.attach(): grad_compress is for DDP models outside --elastic (FSDP2 reduce-scatters its "
                         "shards; a re-formed group would drop the error feedback)")
    if is_fsdp(model):
        attach_fsdp(session, model, lambda: _state.weight, weighting, loss_multiplier, UsageError)
        session.set_model_name(type(model).__name__.removeprefix("FSDP"))
        return model
    if not isinstance(model, DistributedDataParallel):
        raise UsageError(f"bn.attach() needs the DistributedDataParallel model (model = "
                         f"torch.nn.parallel.DistributedDataParallel(model)) or an FSDP2 one (fully_shard(model)), "
                         f"got {type(model).__name__}")
    if session.elastic and optimizer is None:
        raise UsageError("under --elastic, bn.attach(model, optimizer) needs the optimizer: a step interrupted by a "
                         "dead worker is taken again from the last completed step's model and optimizer state")
    state = _HookState(session, model.module, weighting, loss_multiplier)
    if grad_compress == "none":
        model.register_comm_hook(state, _weighted_allreduce)
    else:
        trained = [p for p in model.module.parameters() if p.requires_grad]
        state.compressed = session.compress_gradients(str(grad_compress), int(compress_warmup),
                                                      [state.order[p.data_ptr()] for p in trained],
                                                      [list(p.shape) for p in trained])
        model.register_comm_hook(state, _compressed_allreduce)
    session.set_model_name(type(model.module).__name__)
    _state.model, _state.optimizer = model.module, optimizer
    if session.elastic:
        session.set_committed_state(_committed_bytes)
        if session.joined:  # a restarted worker starts from the members' state
            _restore(session.take_join_state())
        _commit()
    return model


class _HookState:
    def __init__(self, session, module, weighting, loss_multiplier):
        self.session = session
        self.weighting, self.loss_multiplier = weighting, loss_multiplier
        self.generation, self.group = None, None
        # --elastic: one all-reduce per backward, in the module's parameter order (see _whole_allreduce).
        self.whole = session.elastic
        self.order = {p.data_ptr(): i for i, p in enumerate(module.parameters())}
        self.waiting = []  # this backward's buckets until its last: (parameters, buffer, future)
        self.compressed = None  # grad_compress: the engine's compressed sums (session/CompressedBuckets.h)

    def current_group(self):
        """The engine's group (a torch.distributed.ProcessGroup on its Gloo backend), formed again after a membership
        change."""
        if self.generation != self.session.generation:
            self.generation, self.group = self.session.generation, self.session.process_group
        return self.group


def _completed(tensor):
    future = torch.futures.Future()
    future.set_result(tensor)
    return future


def _require_weight():
    """A bucket's weight is its batch's share: a batch from anywhere but bn.DataLoader has none."""
    if _state.weight is None:
        raise UsageError("the model trained a batch that did not come from bn.DataLoader: its gradient weight "
                         "is unknown")


def _weighted_allreduce(state, bucket):
    """DDP's comm hook: this rank's gradient (the mean over its share) times share / global batch, summed.
    A failed all-reduce (a peer died) does not fail DDP's backward: the step is marked broken, and
    step_done() re-forms the group and takes it again (--elastic) or ends the job with one line."""
    _require_weight()
    buffer = bucket.buffer()
    if _state.broken is not None:
        return _completed(buffer)
    if state.whole:
        return _whole_allreduce(state, bucket)
    if bucket.is_last():  # backward is done; an emulated slower node sleeps here, before its last sync
        state.session.backward_done()
    return _sum_weighted(state, buffer, lambda summed: buffer)  # summed in place


def _weigh(state, tensor):
    """This rank's gradient times its weight in the sum (its share, or 1 for a loss over the whole step's items)."""
    tensor.mul_((_state.weight if state.weighting == "share" else 1.0) / state.loss_multiplier)


def _compressed_allreduce(state, bucket):
    """DDP's comm hook under grad_compress: each weighted bucket starts its compressed sum as DDP hands it over
    (overlapped with the rest of backward); at the last bucket all finish, in start order (a compressed sum's second
    phase, PowerSGD's Q or int8's all-gather, is a collective of its own: every rank issues them alike)."""
    _require_weight()
    buffer, future = bucket.buffer(), torch.futures.Future()
    state.waiting.append((buffer, future))
    last = bucket.is_last()
    if last:  # backward is done; an emulated slower node sleeps here, before its last sync
        state.session.backward_done()
    if _state.broken is None:
        _weigh(state, buffer)
        params = bucket.parameters()
        try:
            state.compressed.start([state.order[p.data_ptr()] for p in params], [list(p.shape) for p in params],
                                   buffer, state.session.steps_done)
        except RuntimeError as failure:
            _state.broken = failure
    if not last:
        return future
    waiting, state.waiting = state.waiting, []
    try:
        if _state.broken is None:
            state.compressed.finish()
            state.session.reduced()
        else:
            state.compressed.abandon()
    except RuntimeError as failure:
        _state.broken = failure
    for summed, pending in waiting:
        pending.set_result(summed)
    return future


def _sum_weighted(state, tensor, deliver):
    """Multiplies `tensor` by this rank's weight and sums it over the engine's group; the future DDP waits on
    gives deliver(summed), where summed is False when the all-reduce failed (the step is then broken, and
    whatever deliver returns only keeps DDP's backward going)."""
    _weigh(state, tensor)
    try:
        future = state.current_group().allreduce([tensor]).get_future()
    except RuntimeError as failure:
        _state.broken = failure
        return _completed(deliver(False))

    def reduced(done):
        try:
            done.value()
        except RuntimeError as failure:
            _state.broken = failure
            return deliver(False)
        state.session.reduced()
        return deliver(True)

    return future.then(reduced)


def _whole_allreduce(state, bucket):
    """The weighted all-reduce of --elastic jobs: every bucket waits for the backward's last one, and the whole
    gradient goes in one all-reduce in the module's parameter order. DDP rebuilds its bucket layout after its
    first step, agreed over torch's group; a worker that joins a running job later starts with the first
    layout, so buckets would not match between members, while the parameter order always does. The price is
    the overlap of communication with backward."""
    future = torch.futures.Future()
    state.waiting.append((bucket.parameters(), bucket.buffer(), future))
    if not bucket.is_last():
        return future
    waiting, state.waiting = state.waiting, []
    parts = {}  # parameter index -> its slice of its bucket's buffer
    for params, buffer, _ in waiting:
        offset = 0
        for p in params:
            parts[state.order[p.data_ptr()]] = buffer[offset:offset + p.numel()]
            offset += p.numel()
    order = sorted(parts)
    flat = torch.cat([parts[i] for i in order])
    state.session.backward_done()

    def deliver(summed):
        if summed:  # back into the buckets' buffers
            offset = 0
            for i in order:
                parts[i].copy_(flat[offset:offset + parts[i].numel()])
                offset += parts[i].numel()
        for _, buffer, pending in waiting[:-1]:
            pending.set_result(buffer)
        return waiting[-1][1]

    return _sum_weighted(state, flat, deliver)


def _commit():
    """A copy of what the next step starts from (--elastic): taken after every completed step."""
    _state.committed = (copy.deepcopy(_state.model.state_dict()), copy.deepcopy(_state.optimizer.state_dict()))


def _committed_bytes():
    """The committed state for a member that needs it (a joiner, or all after a failure); the engine calls this
    on the member with the newest one."""
    buffer = io.BytesIO()
    torch.save(_state.committed, buffer)
    return buffer.getvalue()


def _restore(state):
    model_state, optimizer_state = torch.load(io.BytesIO(state))
    _state.model.load_state_dict(model_state)
    _state.optimizer.load_state_dict(optimizer_state)
    _state.optimizer.zero_grad()
    _state.committed = (model_state, optimizer_state)


def _recover(failure):
    """The group forms anew: after a failed collective, with the live workers (--elastic; otherwise this raises
    JobFailure with the failure's line), or at the boundary rank 0 planned for joiners (failure None). Everyone
    takes the model and optimizer of the worker with the newest completed step, and the steps after it are
    taken again, each sample once."""
    # An empty reason is the planned re-form, so a failure always has one: its first line, or its type.
    why = "" if failure is None else next((line for line in str(failure).splitlines() if line), type(failure).__name__)
    _restore(_state.session.reform(why).state)
    _state.broken = None


class _IndexLists:
    """The batch sampler of the torch DataLoader underneath: this rank's indices of each coming global batch,
    guessed under the split in force when the loader reads ahead (the queue keeps the guesses in order)."""

    def __init__(self, session, first, count, guesses):
        self.session, self.first, self.count, self.guesses = session, first, count, guesses

    def __len__(self):
        return self.count

    def __iter__(self):
        for k in range(self.count):
            indices = self.session.guess_indices(self.first + k)
            self.guesses.append(indices)
            yield indices


class DataLoader:
    """This rank's share of every global batch of `global_batch` samples of `dataset` (map-style: __len__ and
    __getitem__). The samples of global batch s are the same whatever the split: one permutation of the
    dataset per pass (from `seed`), each rank taking its current slice of it, so a re-split changes who trains
    a sample, never which samples a step trains. One pass yields len(dataset) // global_batch batches; the
    next pass goes on in the stream (no sample is dropped, a partial last batch opens the next pass).
    num_workers, collate_fn, pin_memory and the other torch DataLoader arguments work as in torch: batches are
    read ahead by the workers under the current split, and read again when a re-split proves a guess wrong."""

    def __init__(self, dataset, global_batch, num_workers=0, seed=0, collate_fn=None, **torch_loader_args):
        session = _session("bn.DataLoader")
        if isinstance(global_batch, bool) or not isinstance(global_batch, int) or global_batch < 1:
            raise UsageError(f"bn.DataLoader: global_batch must be a positive integer, got {global_batch!r}")
        try:
            size = len(dataset)
        except TypeError:
            raise UsageError("bn.DataLoader needs a map-style dataset (with __len__ and __getitem__), got "
                             f"{type(dataset).__name__}") from None
        for unsupported in ("batch_size", "shuffle", "sampler", "batch_sampler", "drop_last"):
            if unsupported in torch_loader_args:
                raise UsageError(f"bn.DataLoader chooses the samples itself: `{unsupported}` is not accepted "
                                 f"(global_batch and seed say what to train)")
        session.start_data(size, global_batch, seed)
        self.dataset = dataset
        self.global_batch = global_batch
        self.collate_fn = collate_fn or default_collate
        self._session = session
        self._torch_args = dict(torch_loader_args, num_workers=num_workers, collate_fn=self.collate_fn)
        # torch's loader draws its workers' base seed from `generator` at every pass: our own one leaves the
        # script's random state (dropout, augmentation) as it would be without balancenet.
        self._torch_args.setdefault("generator", torch.Generator().manual_seed(seed))
        self._pass_end = None  # after load_state_dict(): the restored pass ends where it would have

    def __len__(self):
        return self._session.batches_per_pass()

    def state_dict(self):
        """Where the stream stands after the last completed step, with the orchestrator's state (the split in force):
        a framework keeps it in its checkpoint (Lightning saves a loader's state_dict with the fit loop's)."""
        return {"balancenet_loop": self._session.loop_checkpoint()}

    def load_state_dict(self, state):
        """Goes on from state_dict()'s point, on every rank: the next pass yields the rest of the pass it was in,
        so that a run resumed mid-pass trains the batches the uninterrupted one would have."""
        self._session.restore_loop_checkpoint(state["balancenet_loop"])
        self._pass_end = (self._session.next_batch // len(self) + 1) * len(self)

    def __iter__(self):
        session = self._session
        end = session.next_batch + len(self)  # one pass from where the stream is
        if self._pass_end is not None:
            end, self._pass_end = self._pass_end, None
        inner, generation = None, None
        while session.next_batch < end:
            if inner is None or generation != session.generation:  # after a re-form the stream may go back
                generation, guesses = session.generation, deque()
                sampler = _IndexLists(session, session.next_batch, end - session.next_batch, guesses)
                inner = iter(_TorchDataLoader(self.dataset, batch_sampler=sampler, **self._torch_args))
            try:
                share = session.begin_batch()  # decides the step's split at its first batch (collective)
            except JobFailure as failure:
                _recover(failure)
                continue
            _state.weight = share.weight
            started = time.perf_counter()
            batch = next(inner)
            guessed = guesses.popleft()
            right = guessed == share.indices
            if not right:  # read ahead under a split that changed since: read this rank's real share
                batch = self.collate_fn([self.dataset[i] for i in share.indices])
            session.batch_loaded((time.perf_counter() - started) * 1e3, right)
            yield batch


class MicroBatch:
    """One pass of this rank's share (bn.micro_batches): `batch`, the part (the structure of the share's batch);
    `samples`; `scale`, the factor its mean loss takes so that the passes' gradients add up to the share's mean loss's
    (its samples over the share's); `last`; and sync(model), the context its forward and backward run in."""

    def __init__(self, batch, samples, share, last):
        self.batch, self.samples, self.scale, self.last = batch, samples, samples / share, last

    def sync(self, model):
        """DDP's no_sync() (FSDP2: set_requires_gradient_sync(False)) for every pass but the last, whose backward
        sums the accumulated gradient, weighted by this rank's share, once."""
        if self.last:
            return contextlib.nullcontext()
        if is_fsdp(model):
            return _fsdp_no_sync(model)
        if isinstance(model, DistributedDataParallel):
            return model.no_sync()
        raise UsageError(f"MicroBatch.sync() needs the DistributedDataParallel or FSDP2 model, got {type(model).__name__}")


@contextlib.contextmanager
def _fsdp_no_sync(model):
    model.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        model.set_requires_gradient_sync(True)


def _samples_of(batch):
    """The samples in a batch: the first dimension of its tensors, which must agree."""
    if isinstance(batch, torch.Tensor):
        return {batch.shape[0]} if batch.dim() > 0 else set()
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        return set().union(*(_samples_of(part) for part in batch)) if batch else set()
    return set()


def _part_of(batch, start, end):
    if isinstance(batch, torch.Tensor):
        return batch[start:end] if batch.dim() > 0 else batch
    if isinstance(batch, dict):
        return {k: _part_of(v, start, end) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        parts = [_part_of(v, start, end) for v in batch]
        return type(batch)(parts) if isinstance(batch, list) or type(batch) is tuple else type(batch)(*parts)
    return batch


def micro_batches(batch, max_samples):
    """This rank's share of a step (a batch of bn.DataLoader: a tensor, or a tuple, list or dict of them with the
    samples first) as the fewest passes of at most `max_samples` samples each, sizes differing by at most one (the
    C++ engine's --accumulate auto cut), so that a worker short of memory keeps the share its speed earns: its step
    takes longer, and the policies see it. `max_samples`: what one forward and backward of this rank holds (one
    value per rank: a GPU with less memory gives less); None: the whole share in one pass. Yields MicroBatch:

        for m in bn.micro_batches((x, y), max_samples=16):
            with m.sync(model):
                (loss_fn(model(m.batch[0]), m.batch[1]) * m.scale).backward()
    """
    samples = _samples_of(batch)
    if len(samples) != 1:
        raise UsageError(f"bn.micro_batches(): the batch's tensors must share their first dimension (the samples), "
                         f"got {sorted(samples) or 'no tensor'}")
    share = samples.pop()
    if max_samples is not None and (isinstance(max_samples, bool) or not isinstance(max_samples, int)
                                    or max_samples < 1):
        raise UsageError(f"bn.micro_batches(): max_samples must be a positive integer or None, got {max_samples!r}")
    passes = 1 if max_samples is None or share <= max_samples else -(-share // max_samples)
    if share == 0:
        yield MicroBatch(batch, 0, 1, True)
        return
    start = 0
    for k in range(passes):
        size = share // passes + (1 if k < share % passes else 0)
        yield MicroBatch(_part_of(batch, start, start + size), size, share, k == passes - 1)
        start += size


def step_done(loss=None):
    """Ends the step (call it after optimizer.step()): its timings go to the orchestrator, which may give the
    next step another split. `loss`: this rank's mean loss of the step (a tensor or a number), kept in
    steps.csv as the whole batch's. Returns True; False when a worker died during the step (--elastic): the
    group re-formed, the model and optimizer went back to the last completed step and the loader serves this
    step's batches again, so the loop must not count it."""
    session = _session("bn.step_done()")
    if _state.broken is not None:
        _recover(_state.broken)
        return False
    if isinstance(loss, torch.Tensor):
        loss = loss.detach().item()
    session.end_step(float("nan") if loss is None else float(loss))
    if session.elastic:
        _commit()
        if session.reform_due:  # rank 0 admitted restarted workers at this boundary
            _recover(None)
    return True


def steps_done():
    """Steps completed by the job (a step taken again after a failure counts once)."""
    return _session("bn.steps_done()").steps_done


def record_eval(accuracy, loss=None):
    """An evaluation your loop made (a fraction in [0, 1]); rank 0's goes to summary.json and the report."""
    _session("bn.record_eval()").record_eval(float(accuracy), float("nan") if loss is None else float(loss))


def finish():
    """Writes the run's files (steps.csv, splits.csv, summary.json in run_dir()); collective. Called at exit
    when the script did not, unless it failed. Returns the run directory."""
    session = _session("bn.finish()")
    if not session.finished:
        session.finish()
    return session.run_dir


def _install_exit_handlers():
    previous = sys.excepthook

    def excepthook(kind, value, traceback):
        _state.failed = True
        # balancenet's own errors are one line, as from the command line: exit 2 for bad input, 1 for a failure.
        if isinstance(value, (UsageError, JobFailure)):
            # The process's own stderr: torch 2.x's init_process_group wraps this hook and points sys.stderr
            # at a buffer while it runs (to prefix [rankN]: afterwards), which os._exit would throw away.
            print(f"balancenet: error: {value}", file=sys.__stderr__ or sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(2 if isinstance(value, UsageError) else 1)
        previous(kind, value, traceback)

    sys.excepthook = excepthook

    def at_exit():
        if _state.failed or _state.session is None:
            return
        if _state.session.data_started:
            finish()
        # The session's threads and its own reference to its process group end here, with the GIL released, not
        # in the interpreter's teardown with the GIL held (a Gloo thread freeing a tensor Python owns waits for it).
        _state.session.close()

    atexit.register(at_exit)


_install_exit_handlers()
