"""Material parameters as data: the vocabulary's ``shader`` entries plus a colour, ready for a shader.

Colours are stored in the vocabulary as 8-bit sRGB (what people pick and compare); shaders
work in linear light, so every channel goes through :func:`assets.vocabulary.srgb_to_linear`
here, once, before it reaches Blender. A material whose shader entry says
``"color_transfer": "none"`` (metal) takes the 8-bit value / 255 as it is, as CLEVR did for every
colour: a metal's colour is its reflectance, and grey's linear 0.095 reflects too little light
to read as metal (it rendered as dark charcoal, hard to tell from rubber); 87 / 255 = 0.34 reads
as steel.
"""

from __future__ import annotations

from dataclasses import dataclass

from assets.vocabulary import Vocabulary, load_vocabulary, srgb_to_linear


@dataclass(frozen=True)
class SurfaceParameters:
    """Principled-BSDF inputs for one (material, colour) pair; ``base_color`` is linear RGBA."""

    material: str
    color: str
    base_color: tuple[float, float, float, float]
    metallic: float
    roughness: float
    specular: float

    @property
    def key(self) -> str:
        """A stable name for the shader (one per pair, created once per Blender session)."""
        return f"{self.material}_{self.color}"


def linear_rgba(color: str, vocabulary: Vocabulary | None = None) -> tuple[float, float, float, float]:
    """The vocabulary colour as linear-light RGBA (alpha 1)."""
    vocabulary = vocabulary or load_vocabulary()
    r, g, b = (srgb_to_linear(channel) for channel in vocabulary.srgb(color))
    return (r, g, b, 1.0)


def reflectance_rgba(color: str, vocabulary: Vocabulary | None = None) -> tuple[float, float, float, float]:
    """The vocabulary colour's 8-bit values / 255, untransformed, as RGBA (CLEVR's convention)."""
    vocabulary = vocabulary or load_vocabulary()
    r, g, b = (channel / 255.0 for channel in vocabulary.srgb(color))
    return (r, g, b, 1.0)


BASE_COLOR_BY_TRANSFER = {"srgb": linear_rgba, "none": reflectance_rgba}


def surface_parameters(material: str, color: str, vocabulary: Vocabulary | None = None) -> SurfaceParameters:
    """Shader inputs for an object of ``material`` painted ``color`` (both vocabulary names)."""
    vocabulary = vocabulary or load_vocabulary()
    shader = vocabulary.value("material", material).extra["shader"]
    return SurfaceParameters(
        material=material,
        color=color,
        base_color=BASE_COLOR_BY_TRANSFER[shader.get("color_transfer", "srgb")](color, vocabulary),
        metallic=float(shader["metallic"]),
        roughness=float(shader["roughness"]),
        specular=float(shader["specular"]),
    )


def all_surfaces(vocabulary: Vocabulary | None = None) -> list[SurfaceParameters]:
    """Every (material, colour) pair of the vocabulary, in vocabulary order."""
    vocabulary = vocabulary or load_vocabulary()
    return [
        surface_parameters(material, color, vocabulary)
        for material in vocabulary.names("material")
        for color in vocabulary.names("color")
    ]
