"""The whole models of issue #22's acceptance, for check_models.py and the
examples: torchvision's resnet18 and mobilenet_v2 at a small input, and a
ViT-style block (LayerNorm + attention + MLP)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        qkv = self.qkv(x).reshape(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = torch.matmul(q, k.transpose(-2, -1)) * (d // h) ** -0.5
        a = a.softmax(dim=-1)
        y = torch.matmul(a, v).transpose(1, 2).reshape(b, s, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyViT(nn.Module):
    """Patch embedding (a strided conv), a class token, position
    embeddings, one transformer block, a LayerNorm'd class-token head."""

    def __init__(self, channels=1, size=28, patch=7, dim=32, heads=2, num_classes=10):
        super().__init__()
        self.patch = nn.Conv2d(channels, dim, patch, stride=patch)
        n = (size // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.block = Block(dim, heads, 2 * dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        cls = self.cls.expand(x.shape[0], -1, -1)
        t = torch.cat([cls, t], dim=1) + self.pos
        t = self.block(t)
        return self.head(self.norm(t)[:, 0])


def resnet18(batch):
    import torchvision
    return torchvision.models.resnet18(num_classes=10), torch.zeros(batch, 3, 32, 32)


def mobilenet_v2(batch):
    # 64x64: its last batch norms then normalize over batch x 2 x 2 values
    # (at 32x32 over the batch alone: 4 values at batch 4, where fp32
    # gradients are 1e-2 from fp64 in PyTorch itself).
    import torchvision
    return torchvision.models.mobilenet_v2(num_classes=10), torch.zeros(batch, 3, 64, 64)


def vit_block(batch):
    return TinyViT(), torch.zeros(batch, 1, 28, 28)


MODELS = {"resnet18": resnet18, "mobilenet_v2": mobilenet_v2, "vit_block": vit_block}
