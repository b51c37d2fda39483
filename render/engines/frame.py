"""What one render gives, whatever the engine: the image and the instance mask as arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RenderedFrame:
    """One render: the colour-managed image and the instance mask, both top row first."""

    image: np.ndarray  # (height, width, 3) uint8, sRGB
    mask: np.ndarray  # (height, width) uint8; pixel = mask id, 0 = background
