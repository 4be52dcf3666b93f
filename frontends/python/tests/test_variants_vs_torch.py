"""Argument variants and non-contiguous inputs (permuted, stepped, flipped, padded, expanded,
shrunk views) of the Tensor ops, against torch: values and gradients. Where the seed
(tinygrad) and torch differ, the seed's behaviour is tested and the test says so."""
import math

import numpy as np
import pytest
import torch

from polygrad import PolygradValueError, Tensor


def _sdpa(q, k, v, mask=None, causal=False):
    """torch 1.13 has no F.scaled_dot_product_attention: softmax(q k^T / sqrt(d) + mask) v."""
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).tril(), -np.inf)
    if mask is not None:
        s = s.masked_fill(~mask, -np.inf) if mask.dtype == torch.bool else s + mask
    return s.softmax(-1) @ v


def test_sdpa_attn_mask_with_is_causal_is_an_error():
    # tinygrad and torch raise "cannot set attn_mask when is_causal=True"; the mask was
    # silently combined with the causal one
    rng = np.random.default_rng(0)
    q, k = (Tensor(rng.standard_normal(s).astype(np.float32)) for s in ((2, 4, 8), (2, 6, 8)))
    mask = Tensor(rng.uniform(size=(4, 6)) > 0.5)
    with pytest.raises(PolygradValueError, match=r"cannot set attn_mask \(shape \(4, 6\)\) when "
                                                 r"is_causal=True"):
        q.scaled_dot_product_attention(k, k, attn_mask=mask, is_causal=True)


def test_sdpa_mask_shape_error_names_the_op():
    q = Tensor(np.ones((2, 3, 4), np.float32))
    with pytest.raises(PolygradValueError, match=r"scaled_dot_product_attention: attn_mask shape "
                                                 r"\(5, 5\) does not broadcast with the scores' "
                                                 r"\(2, 3, 3\)"):
        q.scaled_dot_product_attention(q, q, attn_mask=Tensor(np.ones((5, 5), bool)))


def _ones(*shape):
    return Tensor(np.ones(shape, np.float32))


@pytest.mark.parametrize("call, message", [
    (lambda: _ones(5, 6).binary_crossentropy(_ones(6, 5)),
     r"binary_crossentropy: target shape \(6, 5\) does not broadcast with input shape \(5, 6\)"),
    (lambda: _ones(5, 6).binary_crossentropy_logits(_ones(6, 5)),
     r"binary_crossentropy_logits: target shape \(6, 5\) does not broadcast with input shape "
     r"\(5, 6\)"),
    (lambda: _ones(5, 6).binary_crossentropy_logits(_ones(5, 6), pos_weight=_ones(5)),
     r"binary_crossentropy_logits: pos_weight shape \(5,\) does not broadcast with input shape "
     r"\(5, 6\)"),
    (lambda: _ones(2, 3).linear(_ones(4, 5)),
     r"linear: input shape \(2, 3\) and weight shape \(4, 5\) do not match"),
    (lambda: _ones(2, 3).linear(_ones(4, 3), _ones(5)),
     r"linear: bias shape \(5,\) does not broadcast with the output shape \(2, 4\)"),
    (lambda: _ones(2, 4, 8).scaled_dot_product_attention(_ones(2, 6, 8), _ones(2, 5, 8)),
     r"scaled_dot_product_attention: query \(2, 4, 8\), key \(2, 6, 8\) and value \(2, 5, 8\) "
     r"do not fit"),
    (lambda: _ones(2, 4, 8).scaled_dot_product_attention(_ones(2, 6, 7), _ones(2, 6, 8)),
     r"scaled_dot_product_attention: query \(2, 4, 8\), key \(2, 6, 7\)"),
    (lambda: _ones(2, 4, 8).scaled_dot_product_attention(_ones(3, 6, 8), _ones(3, 6, 8)),
     r"scaled_dot_product_attention: query \(2, 4, 8\), key \(3, 6, 8\)"),
    (lambda: _ones(2, 3).lerp(_ones(3, 2), 0.5),
     r"lerp: shapes \(2, 3\), end \(3, 2\) and weight \(\) do not broadcast"),
    (lambda: _ones(2, 3).lerp(_ones(2, 3), _ones(3, 2)),
     r"lerp: shapes \(2, 3\), end \(2, 3\) and weight \(3, 2\) do not broadcast"),
])
def test_composite_shape_errors_name_the_op_and_operands(call, message):
    # these were the errors of the mul, add, sub or matmul inside ("mul: shapes (6, 5) and
    # (5, 6) do not broadcast"), naming neither the op nor which operand was wrong
    with pytest.raises(PolygradValueError, match=message):
        call()
