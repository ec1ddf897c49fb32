"""What the oracles' fused groups share: the groups themselves (`groups`) and the traffic lower
bounds of products computed with a bounded fast memory (`traffic`)."""

from simcore.fusion.groups import (
    EPILOGUE_STEPS,
    EpilogueGemm,
    FusedAttention,
    FusedGroup,
    FusedGroupError,
    FusedMlp,
    decode,
    prefill,
)
from simcore.fusion.traffic import consumed_product_traffic, stored_product_traffic

__all__ = [
    "EPILOGUE_STEPS",
    "EpilogueGemm",
    "FusedAttention",
    "FusedGroup",
    "FusedGroupError",
    "FusedMlp",
    "consumed_product_traffic",
    "decode",
    "prefill",
    "stored_product_traffic",
]
