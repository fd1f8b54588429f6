"""Indexing a 0-d tensor with an integer, slice or index tensor is an IndexError whose message
says to read the value with .item(), as torch's does: the torch 0.3 idiom ``loss.data[0]``
(eriklindernoren/PyTorch-GAN's BEGAN) fails this way under torch 2.13 too. None, ... and True
still index a 0-d tensor."""
import pytest

import ember

KEYS = ["0", "-1", "slice(0, 1)", "lib.tensor(0)", "[0]", "(0, 0)"]


@pytest.mark.parametrize("key", KEYS)
def test_zero_dim_index_names_item(key):
    x = ember.tensor(3.0)
    with pytest.raises(IndexError, match=r"0-dim tensor.*tensor\.item\(\)"):
        x[eval(key, {"lib": ember})]
    with pytest.raises(IndexError, match=r"0-dim tensor.*tensor\.item\(\)"):
        x.data[eval(key, {"lib": ember})]


@pytest.mark.parity
@pytest.mark.parametrize("key", KEYS + ["None", "...", "True", "False"])
def test_zero_dim_index_type_and_shape_match_torch(key):
    torch = pytest.importorskip("torch")

    def run(lib):
        try:
            return tuple(lib.tensor(3.0)[eval(key, {"lib": lib})].shape)
        except IndexError:
            return IndexError

    assert run(ember) == run(torch)


def test_other_index_errors_keep_their_message():
    with pytest.raises(IndexError, match=r"too many indices.*shape \[2\]"):
        ember.zeros(2)[0, 1]
