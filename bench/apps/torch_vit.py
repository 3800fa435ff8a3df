# SPDX-License-Identifier: Apache-2.0
"""Vision-transformer training in bf16 autocast (ViT-S/16: patches of 16, width 384, 12 layers, 6
heads, MLP 1536, 1000 classes), AdamW, a batch of 64 synthetic 224x224 images and labels drawn on
the device every step, fixed seed.
usage: torch_vit.py WAY"""
import harness

harness.require("torch_vit", "torch")

import torch  # noqa: E402 (after the check: without PyTorch or a GPU the run is skipped)

# The footprint counts from here, the same point in every way: the CUDA context exists, nothing is
# allocated yet (not even the python way's pool).
sampled = harness.DeviceMemorySampler().start()
harness.torch_allocator_for_way()

torch.manual_seed(0)
torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True
batch, size, patch, width, depth, heads, classes = 64, 224, 16, 384, 12, 6, 1000


class ViT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.patches = torch.nn.Conv2d(3, width, patch, stride=patch)
        self.cls = torch.nn.Parameter(torch.zeros(1, 1, width))
        self.position = torch.nn.Parameter(0.02 * torch.randn(1, (size // patch) ** 2 + 1, width))
        layer = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, depth, norm=torch.nn.LayerNorm(width),
                                                  enable_nested_tensor=False)
        self.head = torch.nn.Linear(width, classes)

    def forward(self, images):
        x = self.patches(images).flatten(2).transpose(1, 2)  # (batch, patches, width)
        x = torch.cat([self.cls.expand(len(x), -1, -1), x], dim=1) + self.position
        return self.head(self.blocks(x)[:, 0])


model = ViT().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)


def loss_of_step(_):
    images = torch.randn(batch, 3, size, size, device="cuda")
    labels = torch.randint(0, classes, (batch,), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return torch.nn.functional.cross_entropy(model(images), labels)


harness.train_torch("pytorch_vit", loss_of_step, optimizer, 10, 200, sampled)
