"""The shapes and machines the search benchmarks compare samplers on by name (bench_search.py
--cases, bench_unnamed.py --named): (shape, machine overrides)."""

# Shapes and machines other than 128^3 on the chapter's machine, chosen by hand.
CASES: tuple[tuple[str, str], ...] = (
    ("96x200x40", "slots=16"),
    ("1024x64x256", "slots=16"),
    ("200x96x136", "slots=20"),
    ("256x128x64", "slots=24"),
    ("64x512x64", "slots=12"),
    ("384x128x256", "slots=48"),
    ("128x128x128", "slots=16,dma_setup=4"),
    ("256x256x128", "slots=32,mxu_cycles=4"),
    ("160x320x96", "slots=28"),
    ("512x96x128", "slots=40,dma_words_per_cycle=32"),
    ("72x136x200", "slots=18"),
)
# bench_search.py --all-cases adds these: six chosen after the strip ranges were widened, six more,
# and ten drawn with random.Random(20261201) (each side 8 x 6..64, slots of 12..64).
MORE_CASES: tuple[tuple[str, str], ...] = (
    ("48x176x112", "slots=14"),
    ("320x64x192", "slots=22"),
    ("112x240x80", "slots=26,dma_setup=8"),
    ("640x128x96", "slots=36"),
    ("96x96x384", "slots=20,mxu_cycles=2"),
    ("224x160x160", "slots=56,dma_words_per_cycle=8"),
    ("200x312x96", "slots=24"),
    ("384x64x512", "slots=48"),
    ("160x160x240", "slots=20"),
    ("56x448x88", "slots=12"),
    ("264x200x136", "slots=40"),
    ("120x96x352", "slots=28"),
    ("120x504x168", "slots=20"),
    ("160x144x128", "slots=16"),
    ("504x88x160", "slots=20"),
    ("208x496x64", "slots=48"),
    ("472x136x360", "slots=16"),
    ("200x448x128", "slots=56"),
    ("352x328x376", "slots=32"),
    ("352x328x472", "slots=28"),
    ("248x512x280", "slots=64"),
    ("344x344x96", "slots=56"),
)
