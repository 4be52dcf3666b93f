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
