"""The systolic oracle's memory system: its machine as an architecture (`machine`), a block
schedule's run, energy, verification and bounds (`run`), and what it reports (`measures`).
`memory` gathers what the oracle calls."""
