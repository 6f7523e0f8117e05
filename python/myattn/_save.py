"""myattn.save: a state_dict to a safetensors file, in pure Python (struct and json).

The format: an 8-byte little-endian header length, a JSON header
{name: {"dtype", "shape", "data_offsets"}, "__metadata__": {str: str}}, padded
with spaces to a multiple of 8, then the raw little-endian data in header order.
"""

import json
import os
import struct
import tempfile

import numpy as np

PARAMETER_NAMES = ("attn.weight", "attn.bias", "attn_combine.weight", "attn_combine.bias")
SIZE_NAMES = ("query_size", "key_size", "value_size1", "value_size2", "output_size")
METADATA_PREFIX = "myattn."


def to_float32(name, tensor):
    """A C-contiguous little-endian float32 NumPy copy of a torch tensor or array-like of floats."""
    if hasattr(tensor, "detach"):  # a torch tensor: NumPy cannot read it on another device
        tensor = tensor.detach().cpu().numpy()
    array = np.asarray(tensor)
    if array.dtype.kind != "f":
        raise TypeError(f"{name}: expected a floating-point tensor, got dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype="<f4")


def _module_sizes(module):
    """{prefix: sizes} for every submodule that is the article's module (itself at prefix "")."""
    found = {}
    for name, sub in module.named_modules():
        if hasattr(sub, "attn") and hasattr(sub, "attn_combine") and all(hasattr(sub, s) for s in SIZE_NAMES):
            found[name + "." if name else ""] = [int(getattr(sub, s)) for s in SIZE_NAMES]
    return found


def _sizes_from_shapes(arrays, query_size, prefix):
    """The five sizes from the two weights' shapes and q, checked."""
    w1, b1 = arrays.get(prefix + "attn.weight"), arrays.get(prefix + "attn.bias")
    w2, b2 = arrays.get(prefix + "attn_combine.weight"), arrays.get(prefix + "attn_combine.bias")
    if any(t is None for t in (w1, b1, w2, b2)):
        names = ", ".join(repr(prefix + n) for n in PARAMETER_NAMES)
        raise KeyError(f"save: query_size was given, so the state_dict must hold {names}")
    q = int(query_size)
    if q <= 0 or w1.ndim != 2 or w2.ndim != 2 or w1.shape[1] <= q or w2.shape[1] <= q:
        raise ValueError(
            f"save: query_size={q} does not fit {prefix}attn.weight {list(w1.shape)} ([L, q+k]) and "
            f"{prefix}attn_combine.weight {list(w2.shape)} ([o, q+d])"
        )
    return [q, w1.shape[1] - q, w1.shape[0], w2.shape[1] - q, w2.shape[0]]


def _write_atomically(path, chunks):
    """Writes to a temporary file next to `path`, then renames it: `path` is never half-written."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save(module_or_state_dict, path, *, query_size=None, prefix=""):
    """Writes every tensor of a module's state_dict (or of a state_dict) as F32 safetensors.

    A module's sizes go into "__metadata__" as strings, {"myattn.query_size": "32", ...} (with
    the submodule's prefix, "myattn.decoder.attn.query_size", for a nested one), so that
    MyAttn(path), myattn::Parameters::load and `myattn run` need no q. A plain state_dict
    carries no q: give query_size (and the module's `prefix` within it) to store the sizes.
    """
    if hasattr(module_or_state_dict, "state_dict") and hasattr(module_or_state_dict, "named_modules"):
        state_dict = module_or_state_dict.state_dict()
        sizes = _module_sizes(module_or_state_dict)
    elif hasattr(module_or_state_dict, "items"):
        state_dict, sizes = module_or_state_dict, {}
    else:
        raise TypeError(f"save: expected an nn.Module or a state_dict, got {type(module_or_state_dict).__qualname__}")

    arrays = {}
    for name, tensor in state_dict.items():
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise ValueError(f"save: {name!r} cannot name a tensor")
        arrays[name] = to_float32(name, tensor)
    if query_size is not None:
        sizes[prefix] = _sizes_from_shapes(arrays, query_size, prefix)

    metadata = {}
    for p, values in sizes.items():
        for size, value in zip(SIZE_NAMES, values):
            metadata[METADATA_PREFIX + p + size] = str(value)
    header = {"__metadata__": metadata} if metadata else {}
    offset = 0
    for name in sorted(arrays):
        nbytes = arrays[name].nbytes
        header[name] = {"dtype": "F32", "shape": list(arrays[name].shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data start 8-aligned, as the official writer does
    chunks = [struct.pack("<Q", len(text)), text] + [arrays[name].tobytes() for name in sorted(arrays)]
    _write_atomically(path, chunks)
