"""A stand-in for the part of PyTorch that taotop's NCCL probe
(templates/nccl_probe.py) uses, installed as the package `torch` in the rig's
stand-in container image. The rig has no GPUs: tensors are a length and one
value, and torch.distributed's all_reduce meets the other ranks through files
in a rendezvous folder the torchrun stand-in names (TORCH_STANDIN_RDZV). It
plays the seed's intra-node P2P hang: see distributed.py."""
import os

from . import cuda  # noqa: F401  (torch.cuda is reachable as an attribute)
from . import distributed  # noqa: F401

__version__ = "2.3.0a0+stand-in"


class Tensor:
    """A 1-D tensor whose elements all hold one value."""

    def __init__(self, n, value, device="cpu"):
        self._n = n
        self._value = float(value)
        self.device = device

    def numel(self):
        return self._n

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if not -self._n <= i < self._n:
            raise IndexError("index %d is out of bounds for dimension 0 with size %d" % (i, self._n))
        return Tensor(1, self._value, self.device)

    def item(self):
        return self._value

    def __repr__(self):
        return "tensor([%s, ...], device='%s')" % (self._value, self.device)


def _device(device):
    device = str(device or "cpu")
    if device.startswith("cuda") and not cuda.is_available():
        raise RuntimeError("Found no NVIDIA driver on your system.")
    if device == "cuda":
        device = "cuda:%d" % cuda.current_device()
    return device


def ones(*size, device=None, dtype=None):
    n = 1
    for s in size:
        n *= int(s)
    return Tensor(n, 1.0, _device(device))


def zeros(*size, device=None, dtype=None):
    n = 1
    for s in size:
        n *= int(s)
    return Tensor(n, 0.0, _device(device))


os.environ.setdefault("TORCH_STANDIN", "1")
