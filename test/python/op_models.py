"""One small model per op qtrain-import-torch supports (issue #22's list),
each ending in logits, for `qtrain-import-torch --check`.

    python3 op_models.py NAME      prints nothing; used by check_ops.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

C, H, W = 3, 8, 8      # image input
CLASSES = 5


class Head(nn.Module):
    """Flatten + Linear to logits after a body."""

    def __init__(self, body, features):
        super().__init__()
        self.body = body
        self.fc = nn.Linear(features, CLASSES)

    def forward(self, x):
        return self.fc(torch.flatten(self.body(x), 1))


def conv(**kw):
    m = nn.Conv2d(C, kw.pop("out", 6), **kw)
    with torch.no_grad():
        out = m(torch.zeros(1, C, H, W))
    return Head(m, out.numel())


class Act(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.conv = nn.Conv2d(C, 4, 3, padding=1)
        self.act = act
        self.fc = nn.Linear(4 * H * W, CLASSES)

    def forward(self, x):
        return self.fc(self.act(self.conv(x)).flatten(1))


class Fn(nn.Module):
    """A conv, then `fn(y)`, then a classifier."""

    def __init__(self, fn, features=4 * H * W):
        super().__init__()
        self.conv = nn.Conv2d(C, 4, 3, padding=1)
        self.fn = fn
        self.fc = nn.Linear(features, CLASSES)

    def forward(self, x):
        return self.fc(torch.flatten(self.fn(self.conv(x)), 1))


class Binary(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.a = nn.Conv2d(C, 4, 3, padding=1)
        self.b = nn.Conv2d(C, 4, 1)
        self.scale = nn.Parameter(torch.rand(4, 1, 1) + 0.5)
        self.op = op
        self.fc = nn.Linear(4 * H * W, CLASSES)

    def forward(self, x):
        return self.fc(self.op(self.a(x), self.b(x), self.scale).flatten(1))


class Cat(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(C, 4, 3, padding=1)
        self.b = nn.Conv2d(C, 2, 1)
        self.fc = nn.Linear(6 * H * W, CLASSES)

    def forward(self, x):
        return self.fc(torch.cat([self.a(x), F.relu(self.b(x))], dim=1).view(x.size(0), -1))


class Shapes(nn.Module):
    """view, reshape, permute, transpose, flatten."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, 4, 3, padding=1)
        self.lin = nn.Linear(4, 6)
        self.fc = nn.Linear(6 * H * W, CLASSES)

    def forward(self, x):
        y = self.conv(x)                          # N 4 H W
        y = y.permute(0, 2, 3, 1)                 # N H W 4
        y = self.lin(y)                           # N H W 6
        y = y.reshape(x.shape[0], H * W, 6).transpose(1, 2).contiguous()
        return self.fc(y.view(-1, 6 * H * W))


class Attention(nn.Module):
    """matmul, bmm, softmax on a token sequence."""

    def __init__(self, d=8, seq=6):
        super().__init__()
        self.seq, self.d = seq, d
        self.embed = nn.Linear(C * H * W, seq * d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.fc = nn.Linear(seq * d, CLASSES)

    def forward(self, x):
        t = self.embed(x.flatten(1)).view(x.size(0), self.seq, self.d)
        q, k, v = self.q(t), self.k(t), self.v(t)
        a = torch.softmax(torch.matmul(q, k.transpose(1, 2)) / self.d ** 0.5, dim=-1)
        y = torch.bmm(a, v)
        return self.fc(y.flatten(1))


class DropoutNet(nn.Module):
    """nn.Dropout and F.dropout(training=self.training)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(C * H * W, 32)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, CLASSES)

    def forward(self, x):
        y = self.drop(F.relu(self.fc1(x.flatten(1))))
        y = F.dropout(F.relu(self.fc2(y)), p=0.5, training=self.training)
        return self.fc3(y)


class LogSoftmaxHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(C * H * W, 16)
        self.fc2 = nn.Linear(16, CLASSES)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x.flatten(1)))), dim=1)


class Norms(nn.Module):
    def __init__(self, functional=False):
        super().__init__()
        self.functional = functional
        self.conv = nn.Conv2d(C, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * H * W, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, CLASSES)

    def forward(self, x):
        if self.functional:
            y = F.batch_norm(self.conv(x), self.bn.running_mean, self.bn.running_var,
                             self.bn.weight, self.bn.bias, self.training, 0.1, 1e-5)
            z = F.layer_norm(self.fc1(F.relu(y).flatten(1)), (16,), self.ln.weight, self.ln.bias)
        else:
            z = self.ln(self.fc1(F.relu(self.bn(self.conv(x))).flatten(1)))
        return self.fc2(z)


class Embed(nn.Module):
    def __init__(self, functional=False):
        super().__init__()
        self.functional = functional
        self.table = nn.Embedding(20, 8)
        self.fc = nn.Linear(6 * 8, CLASSES)

    def forward(self, ids):
        if self.functional:
            e = F.embedding(ids, self.table.weight)
        else:
            e = self.table(ids)
        return self.fc(e.flatten(1))


class FunctionalLayers(nn.Module):
    """F.conv2d and F.linear on parameters of the model."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, C, 3, 3) * 0.2)
        self.b = nn.Parameter(torch.randn(4) * 0.1)
        self.fw = nn.Parameter(torch.randn(CLASSES, 4 * 4 * 4) * 0.1)

    def forward(self, x):
        y = F.conv2d(x, self.w, self.b, stride=2, padding=1)
        return F.linear(F.relu(y).flatten(1), self.fw)


MODELS = {
    # Conv2d: stride, padding, dilation, groups (grouped and depthwise).
    "conv": lambda: conv(kernel_size=3),
    "conv_stride_pad": lambda: conv(kernel_size=3, stride=2, padding=1),
    "conv_dilation": lambda: conv(kernel_size=3, dilation=2, padding=2),
    "conv_groups": lambda: conv(out=6, kernel_size=3, groups=3, padding=1),
    "conv_depthwise": lambda: conv(out=3, kernel_size=3, groups=3, padding=1, bias=False),
    "conv_same": lambda: conv(kernel_size=(3, 2), padding="same"),
    "f_conv_linear": FunctionalLayers,
    "linear": LogSoftmaxHead,
    # Activations, as modules and as functions.
    "relu": lambda: Act(nn.ReLU()),
    "relu6": lambda: Act(nn.ReLU6()),
    "leaky_relu": lambda: Act(nn.LeakyReLU(0.1)),
    "gelu": lambda: Act(nn.GELU()),
    "gelu_tanh": lambda: Act(nn.GELU(approximate="tanh")),
    "silu": lambda: Act(nn.SiLU()),
    "hardswish": lambda: Act(nn.Hardswish()),
    "hardsigmoid": lambda: Act(nn.Hardsigmoid()),
    "sigmoid": lambda: Act(nn.Sigmoid()),
    "tanh": lambda: Act(nn.Tanh()),
    "f_activations": lambda: Fn(lambda y: F.relu(F.hardsigmoid(4.0 * F.hardswish(F.silu(
        torch.tanh(F.gelu(F.leaky_relu(F.relu6(torch.sigmoid(y)) - 0.5, 0.2))))) - 0.1))),
    # Pooling.
    "maxpool": lambda: Fn(nn.MaxPool2d(2), 4 * 4 * 4),
    "maxpool_pad_stride": lambda: Fn(nn.MaxPool2d(3, stride=2, padding=1), 4 * 4 * 4),
    "avgpool": lambda: Fn(nn.AvgPool2d(2), 4 * 4 * 4),
    "avgpool_pad_exclude": lambda: Fn(nn.AvgPool2d(3, stride=2, padding=1,
                                                   count_include_pad=False), 4 * 4 * 4),
    "adaptive_avgpool": lambda: Fn(nn.AdaptiveAvgPool2d(1), 4),
    "adaptive_avgpool_2": lambda: Fn(nn.AdaptiveAvgPool2d((2, 2)), 16),
    "f_pools": lambda: Fn(lambda y: F.adaptive_avg_pool2d(F.avg_pool2d(F.max_pool2d(y, 2), 2), 1), 4),
    # Normalization.
    "norms": Norms,
    "f_norms": lambda: Norms(functional=True),
    # Shapes and arithmetic.
    "shapes": Shapes,
    "cat": Cat,
    "add": lambda: Binary(lambda a, b, s: a + b * 2.0),
    "sub_mul": lambda: Binary(lambda a, b, s: (a - b) * s),
    "div": lambda: Binary(lambda a, b, s: torch.div(a, s) + torch.mul(b, 3.0)),
    "mean": lambda: Fn(lambda y: y.mean(dim=(2, 3)), 4),
    "dropout": DropoutNet,
    # Attention pieces.
    "matmul_softmax": Attention,
    # Embeddings (token-id input).
    "embedding": Embed,
    "f_embedding": lambda: Embed(functional=True),
}

# Models whose input is token ids: 2 x 6 ids below 20.
IDS = {"embedding", "f_embedding"}
