"""Readers that turn a model description into a `Workload` of weighted GEMMs: ONNX models
(`onnx_graph`) and SCALE-Sim topology CSVs (`scalesim`). `search_spaces.workload.load_workload`
picks the reader by suffix (and, for .csv, by header); `layers` merges same-shape GEMMs."""
