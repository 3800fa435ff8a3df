# SPDX-License-Identifier: Apache-2.0
"""GPT-2-style transformer training (6 layers, width 768, 12 heads), batch 8, sequence length
varying step to step (a fixed pseudo-random sequence of lengths from 128 to 1024), fixed seed.
usage: torch_gpt2.py WAY"""
import harness

harness.require("torch_gpt2", "torch")

import torch  # noqa: E402 (after the check: without PyTorch or a GPU the run is skipped)

# The footprint counts from here, the same point in every way: the CUDA context exists, nothing is
# allocated yet (not even the python way's pool).
sampled = harness.DeviceMemorySampler().start()
harness.torch_allocator_for_way()

torch.manual_seed(0)
vocab, width, layers, heads = 16384, 768, 6, 12


class GPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.position = torch.nn.Embedding(1024, width)
        layer = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True,
                                                 norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, tokens):
        n = tokens.shape[1]
        mask = torch.nn.Transformer.generate_square_subsequent_mask(n, device=tokens.device)
        x = self.embed(tokens) + self.position(torch.arange(n, device=tokens.device))
        return self.head(self.blocks(x, mask=mask, is_causal=True))


model = GPT().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
generator = torch.Generator().manual_seed(1)
lengths = [int(n) for n in torch.randint(128, 1025, (40,), generator=generator)]


def loss_of_step(i):
    n = lengths[i % len(lengths)]
    tokens = torch.randint(0, vocab, (8, n + 1), device="cuda", generator=None)
    logits = model(tokens[:, :-1])
    return torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))


harness.train_torch("pytorch_gpt2", loss_of_step, optimizer, 5, 20, sampled)
