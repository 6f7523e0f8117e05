"""myattn from Python: the MyAttn concat-attention module run by myattn's CPU kernels.

    import myattn
    attn = myattn.MyAttn.from_module(torch_module)   # or MyAttn("weights.safetensors")
    fast = myattn.MyAttn.from_module(torch_module, precision="int8")   # or "bf16"
    output, attn_weights = attn.forward(Q, K, V)      # NumPy arrays or CPU torch tensors
    attn.forward(Q, K, V, out=(output, attn_weights)) # into outputs made once

Q [B, 1, q], K [B, 1, k] or [1, 1, k], V [B, L, d] or [1, L, d] give output [B, 1, o];
the module's own layout Q [1, B, q], K [1, B, k] or [1, 1, k], V [1, L, d] gives
output [1, B, o]; attn_weights is [B, L] either way. Inputs must be float32 and
contiguous (a module of precision "bf16" also takes V as a torch.bfloat16 tensor): they are
read in place, never copied. The GIL is released while the
kernels run, so Python threads calling one module run in parallel.

NumPy is required; torch is used only when the caller passes torch objects.
"""

import json
import numbers
import os
from collections.abc import Mapping

from ._myattn import ArgumentError, FileError, IsaError, Module, ShapeError
from ._myattn import info as _info
from ._save import PARAMETER_NAMES, save, to_float32

__all__ = ["MyAttn", "save", "info", "ShapeError", "ArgumentError", "IsaError", "FileError"]
__version__ = _info()["version"]


def info():
    """A dict: version, cpu_features, compiled_isas, runnable_isas, isa (the default one),
    isa_reason, kernel_id (of the default ISA at f32), precisions (names), kernel_ids (per
    precision, of the default ISA)."""
    return _info()


def _lookup(state_dict, key):
    if key not in state_dict:
        keys = list(state_dict)
        # Quoted as the C++ errors quote names (JSON style).
        listed = ", ".join(json.dumps(k) for k in keys[:5]) + (", ..." if len(keys) > 5 else "")
        raise KeyError(f"state_dict: missing {json.dumps(key)}; it holds {len(keys)} entries: {listed}")
    return to_float32(key, state_dict[key])


def _check_arguments(query_size, isa, prefix, precision):
    # pybind11 would refuse these too, but with a list of constructor signatures.
    if query_size is not None:
        if isinstance(query_size, bool) or not isinstance(query_size, numbers.Integral):
            raise TypeError(f"query_size: expected an int, got {type(query_size).__qualname__}")
        if query_size <= 0:
            raise ValueError(f"query_size: expected a size > 0, got {query_size}")
    if isa is not None and not isinstance(isa, str):
        raise TypeError(f"isa: expected a name such as 'avx2' or None, got {type(isa).__qualname__}")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix: expected a str, got {type(prefix).__qualname__}")
    if precision is not None and not isinstance(precision, str):
        raise TypeError(f"precision: expected one of {info()['precisions']} or None, got {type(precision).__qualname__}")


class MyAttn(Module):
    """The module, its weights packed for one ISA and precision.

    MyAttn(path, query_size=None, isa=None, prefix="", precision=None): a safetensors file, as myattn.save
    writes it (q is in its metadata) or any file of the four state_dict tensors (then q must
    be given). MyAttn(state_dict, query_size, isa=None, prefix="", precision=None): a mapping
    of the four tensors (torch tensors or NumPy arrays). `prefix` is prepended to each tensor
    name ("decoder.attn." for a module nested in a model). `isa` is one of
    info()["runnable_isas"]; None takes the default (info()["isa"]). `precision` is one of
    info()["precisions"]: "f32" (None, the default), "int8" (both Linears dynamically
    quantized) or "bf16" (bfloat16 weights; V may then be a torch.bfloat16 tensor); inputs and
    outputs are float32 whatever the precision (docs/accuracy.md says what each costs).

    forward(Q, K, V) (also the call operator) returns (output, attn_weights), NumPy arrays for
    NumPy inputs and CPU torch tensors for torch inputs. forward(Q, K, V, out=(output,
    attn_weights)) writes into those instead (the inputs' kind, float32, C-contiguous, writable,
    exactly the result's shapes, sharing no memory with the inputs or each other) and returns
    them. Wrong types or dtypes raise TypeError, anything else wrong ValueError (ShapeError and
    ArgumentError are ValueErrors).
    """

    def __init__(self, state_dict_or_path, query_size=None, isa=None, prefix="", precision=None):
        _check_arguments(query_size, isa, prefix, precision)
        if isinstance(state_dict_or_path, (str, os.PathLike)):
            super().__init__(os.fspath(state_dict_or_path), query_size, isa, prefix, precision)
            return
        if not isinstance(state_dict_or_path, Mapping):
            raise TypeError(
                "MyAttn: expected a state_dict (a mapping of tensors) or a path to a safetensors file, "
                f"got {type(state_dict_or_path).__qualname__}"
            )
        if query_size is None:
            raise TypeError(
                "MyAttn: a state_dict does not carry q: give query_size=, or use MyAttn.from_module(module)"
            )
        tensors = [_lookup(state_dict_or_path, prefix + name) for name in PARAMETER_NAMES]
        super().__init__(query_size, *tensors, isa, precision)

    @classmethod
    def from_module(cls, module, isa=None, precision=None):
        """From an nn.Module holding the article's attributes: query_size, attn, attn_combine."""
        query_size = getattr(module, "query_size", None)
        if query_size is None or not hasattr(module, "state_dict"):
            raise TypeError(
                "MyAttn.from_module: expected the article's nn.Module (with query_size, attn and "
                f"attn_combine), got {type(module).__qualname__}"
            )
        return cls(module.state_dict(), query_size, isa, precision=precision)

