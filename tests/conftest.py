"""Shared fixtures: a seeded NumPy generator and a re-seeded ember default generator."""
from __future__ import annotations

import numpy as np
import pytest

import ember


@pytest.fixture
def rng():
    """A fresh NumPy generator with a fixed seed, so test inputs are reproducible."""
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _seed_ember():
    """Every test starts from ember's generator seeded with 0 (order-independent results)."""
    ember.manual_seed(0)
    yield
