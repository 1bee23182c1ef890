"""torchvision as a broken install ships it (valorch test image): its native
library was built against another torch (2.13) than the one installed (1.13),
so loading it fails with "undefined symbol", exactly as a mismatched wheel does."""

import os

import torch

__version__ = "0.14.1"

torch.ops.load_library(os.path.join(os.path.dirname(__file__), "libtorchvision.so"))
