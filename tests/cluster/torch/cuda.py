"""torch.cuda for the stand-in: the job's GPUs (CUDA_VISIBLE_DEVICES, as
SLURM sets it from --gres) are the devices; nothing runs on them."""
import os

_current = 0


def device_count():
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    if visible in ("", "NoDevFiles"):
        return 0
    return len(visible.split(","))


def is_available():
    return device_count() > 0


def set_device(index):
    global _current
    if isinstance(index, str):
        index = int(index.split(":")[-1])
    if not 0 <= index < max(device_count(), 1):
        raise RuntimeError("CUDA error: invalid device ordinal")
    _current = index


def current_device():
    return _current


def synchronize(device=None):
    return None
