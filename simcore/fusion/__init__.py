"""What the oracles' fused groups share: the traffic lower bounds of products computed with a
bounded fast memory (`traffic`)."""

from simcore.fusion.traffic import consumed_product_traffic, stored_product_traffic

__all__ = ["consumed_product_traffic", "stored_product_traffic"]
