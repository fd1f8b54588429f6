"""``torch.testing._internal``: only ``common_utils.TestCase``, which libraries' own test suites
import (timm's test_optim compares optimizers' state_dicts with its ``assertEqual``)."""
