"""bn.attach() for a model sharded with FSDP2 (torch.distributed.fsdp.fully_shard): per-worker shares without a comm
hook, which FSDP2 does not have.

FSDP2 reduce-scatters each module's gradient during backward and divides the sum by the world size (an equal
average). For unequal shares each rank's gradient must instead be weighted by its share of the global batch before
the sum. Two settings and one autograd node do it, on every backend (Gloo has no pre-multiplied sum):
- every FSDP module reduces with a plain sum (divide factor 1, sum-only collectives), so nothing is divided after;
- the root's outputs pass through _Weighted, which multiplies the gradient flowing back into them by this rank's
  weight. Backward is linear in that gradient, so every parameter's gradient is weighted whatever the loss does
  with the outputs (a mean over the local batch, as people write it, or several outputs summed).
_Weighted's backward is also where this rank's backward starts: the session's clock opens the step's exchange
window there, because FSDP2's collectives run inside backward (an all-gather per module, then its reduce-scatter),
so the time the others wait for a straggler falls in the exchange, not in this rank's compute."""
import sys

import torch


def _fsdp_module_class():
    """FSDPModule if the script imported FSDP2, else None. Importing it here would cost every balancenet process
    about 2 s of CPU (it pulls in torch._dynamo and sympy), and a model cannot be an FSDPModule unless its script
    imported torch.distributed.fsdp."""
    fsdp = sys.modules.get("torch.distributed.fsdp")
    return getattr(fsdp, "FSDPModule", None)


def is_fsdp(model):
    fsdp_module = _fsdp_module_class()
    return fsdp_module is not None and isinstance(model, fsdp_module)


class _Weighted(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, hook):
        ctx.hook = hook
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.hook.weight_at_backward(), None


class _Hook:
    """The root module's forward hook and the step's weight: one _Weighted per output tensor, the session told once
    per backward (at its first output gradient) and again when backward ends."""

    def __init__(self, session, model, weight, weighting, loss_multiplier, usage_error):
        self.session, self.weight, self.weighting, self.loss_multiplier = session, weight, weighting, loss_multiplier
        self.in_backward = False
        self.checked, self.model, self.usage_error = False, model, usage_error

    def check_root(self):
        """Weighting a block's outputs would weight the layers before it and not those after: only the root will do.
        FSDP2 knows which module is its root after the first forward pass."""
        if getattr(self.model._get_fsdp_state(), "_is_root", True) is False:
            raise self.usage_error("bn.attach(): give the root FSDP2 module (the model fully_shard was applied to "
                                   "last), not one of its blocks")
        self.checked, self.model = True, None

    def weight_at_backward(self):
        if not self.in_backward:
            self.in_backward = True
            self.session.backward_done()  # an emulated slower node sleeps here, before any of its reduce-scatters
            torch.autograd.Variable._execution_engine.queue_callback(self.backward_ended)
        share = self.weight()
        if share is None:
            raise self.usage_error("the model trained a batch that did not come from bn.DataLoader: its gradient "
                                   "weight is unknown")
        return (share if self.weighting == "share" else 1.0) / self.loss_multiplier

    def backward_ended(self):
        self.in_backward = False
        self.session.reduced()

    def __call__(self, module, args, output):
        if not self.checked:
            self.check_root()
        if not torch.is_grad_enabled():  # evaluation: nothing flows back
            return output
        return _map_tensors(output, lambda t: _Weighted.apply(t, self) if t.requires_grad else t)


def _map_tensors(value, f):
    """`value` with f applied to every tensor in it: a tensor, or tuples, lists and dicts of them (transformers'
    ModelOutput is a dict whose items are also attributes: changed in place)."""
    if isinstance(value, torch.Tensor):
        return f(value)
    if isinstance(value, dict):
        for key in list(value.keys()):
            value[key] = _map_tensors(value[key], f)
        return value
    if isinstance(value, (tuple, list)):
        mapped = [_map_tensors(v, f) for v in value]
        return type(value)(*mapped) if hasattr(value, "_fields") else type(value)(mapped)
    return value


def attach_fsdp(session, model, weight, weighting, loss_multiplier, usage_error):
    """Weights `model`'s (the root FSDP module's) gradients by this rank's share; `weight()` is the current step's."""
    import torch.distributed as dist
    if session.elastic:
        raise usage_error("bn.attach(): an FSDP2 model cannot run under --elastic (a dead worker takes its shard of "
                          "the parameters and optimizer state with it); leave --elastic out or use DDP")
    if dist.get_world_size() != session.world_size:
        raise usage_error(f"bn.attach(): the FSDP2 model's group has {dist.get_world_size()} ranks, the job "
                          f"{session.world_size}: shard it over the group `balancenet launch` started")
    fsdp_module = _fsdp_module_class()  # not None: is_fsdp(model) held
    for module in model.modules():
        if isinstance(module, fsdp_module):
            module.set_gradient_divide_factor(1.0)
            module.set_force_sum_reduction_for_comms(True)
    model.register_forward_hook(_Hook(session, model, weight, weighting, loss_multiplier, usage_error))
