"""Models qtrain-import-torch refuses (and one with dropout), for import-errors.test. Line
numbers matter: the test checks the source line each error names."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv1dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv1d(1, 4, 3), nn.ReLU())
        self.fc = nn.Linear(4 * 782, 10)

    def forward(self, x):
        return self.fc(self.features(x.flatten(2)).flatten(1))


class SortNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        y = self.fc(x.flatten(1))
        return torch.sort(y, dim=1).values


class DropoutNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(self.drop(F.relu(self.fc1(x.flatten(1)))))


class TupleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        y = self.fc(x.flatten(1))
        return y, y


class BranchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        if x.sum() > 0:
            return self.fc(x.flatten(1))
        return -self.fc(x.flatten(1))


def not_a_module():
    return 3
