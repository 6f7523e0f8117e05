import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import myattn  # noqa: E402  (after the path above, for `support`)


def pytest_generate_tests(metafunc):
    # Every test that takes `isa` runs once per ISA this CPU runs.
    if "isa" in metafunc.fixturenames:
        metafunc.parametrize("isa", myattn.info()["runnable_isas"])


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="session")
def article(torch):
    """The article's module class: its forward indexes Q[0] and K[0], batching along dim 1."""
    nn, F = torch.nn, torch.nn.functional

    class MyAttn(nn.Module):
        def __init__(self, query_size, key_size, value_size1, value_size2, output_size):
            super().__init__()
            self.query_size, self.key_size = query_size, key_size
            self.value_size1, self.value_size2, self.output_size = value_size1, value_size2, output_size
            self.attn = nn.Linear(query_size + key_size, value_size1)
            self.attn_combine = nn.Linear(query_size + value_size2, output_size)

        def forward(self, Q, K, V):
            attn_weights = F.softmax(self.attn(torch.cat((Q[0], K[0]), -1)), dim=-1)
            attn_applied = torch.bmm(attn_weights.unsqueeze(0), V)
            output = self.attn_combine(torch.cat((Q, attn_applied), -1))
            return output, attn_weights

    return MyAttn


@pytest.fixture
def cli():
    """The `myattn` executable (ctest passes it), or a skip."""
    path = os.environ.get("MYATTN_CLI")
    if not path:
        pytest.skip("MYATTN_CLI is not set (ctest sets it)")
    return path
