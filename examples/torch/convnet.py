"""The convnet of PyTorch's MNIST example, for 28x28 Fashion-MNIST: the
model of examples/models/convnet.mlir, which leaves out the example's two
dropouts (qtrain-import-torch would import them as qtrain.dropout, whose
masks PyTorch's RNG cannot reproduce in a step-for-step comparison).

    qtrain-import-torch examples/torch/convnet.py:ConvNet --input-shape=128x1x28x28 -o convnet.mlir
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)
