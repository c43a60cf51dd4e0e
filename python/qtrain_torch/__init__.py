"""qtrain's PyTorch front door: a torch.nn.Module becomes the forward graph
that qtrain-compile takes (docs/import-torch.md).

    import qtrain_torch
    text = qtrain_torch.export(model, torch.zeros(128, 1, 28, 28))
    open("model.mlir", "w").write(text)
"""
from .lower import Importer, UnsupportedError

__all__ = ["export", "export_with_params", "Importer", "UnsupportedError"]


def export_with_params(module, example_input, dropout="train"):
    """(MLIR text, the parameters in argument order: dicts with 'name',
    'torch_shape' and the 'tensor' of the argument), and the notes."""
    imp = Importer(module, example_input, dropout=dropout)
    text = imp.run()
    return text, imp.params, imp.notes


def export(module, example_input, dropout="train"):
    """The forward graph of `module` at the batch and shape of
    `example_input` (float32 features or int64 token ids), as MLIR text:
    @forward with the parameters as {qtrain.param} arguments that carry
    their current values, batch norm running statistics as constants that
    qtrain-compile turns into state, and the logits as the result."""
    return export_with_params(module, example_input, dropout)[0]
