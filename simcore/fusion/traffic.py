"""Lower bounds on the words a product moves between slow memory (DRAM) and a fast memory of S
words, by the classical algorithm (every product a_ik b_kj formed once, no algebraic tricks).

* Output stored (`stored_product_traffic`): Smith, Lowery, Langou and van de Geijn (A Tight
  I/O Lower Bound for Matrix Multiplication, 2019) prove that C := A B + C moves at least
  2 M N K / sqrt(S) - 2 S words. A run that reads no initial C would add at most M N reads to
  reach their setting, so it moves at least 2 M N K / sqrt(S) - 2 S - M N.
* Output consumed on chip (`consumed_product_traffic`): in a fused group an entry of C may be
  used where it is made (the next operation reads it) and never stored. Cut the run into
  segments of S transfers. In one segment the products formed touch at most 2 S entries of A
  and 2 S of B (present at the segment's start, or loaded in it) and at most 3 S + P / K
  entries of C: partial sums present at the start, present at the end, or moved in the segment
  (S each at most), and entries begun and completed inside it, each of which takes all K of
  its products there (a partial sum cannot be dropped: its products would be lost). By the
  Loomis-Whitney inequality the P products formed satisfy P^2 <= |A| |B| |C|
  <= 4 S^2 (3 S + P / K), so P <= F = 2 S^2 / K + sqrt(4 S^4 / K^2 + 12 S^3). Every segment
  but the last moves S words, so a run of P_total products moves at least
  S (ceil(P_total / F) - 1) words. It holds whether or not the output is stored, so it bounds
  a fused and an unfused schedule alike.
"""

from __future__ import annotations

import math


def stored_product_traffic(m: int, n: int, k: int, capacity: int) -> int:
    """Words a product whose inputs start in and whose output ends in slow memory moves."""
    return max(0, math.floor(2 * m * n * k / math.sqrt(capacity) - 2 * capacity - m * n))


def segment_products(k: int, capacity: int) -> float:
    """F: the most products one segment of `capacity` transfers can form (see the note)."""
    s = float(capacity)
    return 2 * s * s / k + math.sqrt(4 * s**4 / k**2 + 12 * s**3)


def consumed_product_traffic(products: int, k: int, capacity: int) -> int:
    """Words a product of `products` multiply-adds with reduction length `k`, inputs in slow
    memory and output possibly consumed on chip, moves at least."""
    if products <= 0:
        return 0
    segments = math.ceil(products / segment_products(k, capacity))
    return capacity * max(0, segments - 1)
